import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import type { ReceiverTimeouts } from '../config/load-config.js';
import { createWarningLimiter } from '../warning-limiter.js';

/** How often, at most, a connection cap that keeps refusing is logged. */
const DROP_LOG_INTERVAL_MS = 60_000;

/**
 * Caps the connections `server` holds open at `max`: Node closes each further one as soon as it is accepted,
 * before a byte is read. `onDrop` counts them; a warning is logged at most once a minute while it lasts, the next
 * saying how many it left out (`suppressed`).
 */
export function capConnections(server: Server, max: number, log: FastifyBaseLogger, onDrop: () => void): void {
  server.maxConnections = max;
  const warnings = createWarningLimiter(log, DROP_LOG_INTERVAL_MS);
  server.on('drop', () => {
    onDrop();
    warnings.warn({ maxConnections: max }, 'connection cap reached: further connections are closed at once');
  });
}

/** Answers `socket` as Node answers a request that timed out: 408, through the server's clientError handler. */
function expire(server: Server, socket: Socket): void {
  if (socket.destroyed) return;
  const err = Object.assign(new Error('the first request of the connection was not received in time'), {
    code: 'ERR_HTTP_REQUEST_TIMEOUT',
  });
  server.emit('clientError', err, socket);
}

/**
 * Node measures `headersTimeout` and `requestTimeout` from a request's first byte, so a client that connects
 * and waits before it sends one gets that wait on top: up to `headersMs` more. The first request of a
 * connection is held to deadlines counted from the connection instead: its headers within `headersMs`, the
 * whole request within `requestMs`. Later requests of a keep-alive connection keep Node's measure, from their
 * first byte, which comes at most `keepAliveMs` after the previous answer.
 */
export function enforceFirstRequestDeadlines(server: Server, timeouts: Pick<ReceiverTimeouts, 'headersMs' | 'requestMs'>): void {
  const firstRequests = new WeakMap<Socket, { openedMs: number; timer: NodeJS.Timeout }>();
  server.on('connection', (socket: Socket) => {
    const timer = setTimeout(expire, timeouts.headersMs, server, socket).unref();
    firstRequests.set(socket, { openedMs: performance.now(), timer });
    socket.once('close', () => clearTimeout(timer));
  });
  server.on('request', (request, response) => {
    const first = firstRequests.get(request.socket);
    if (first === undefined) return;
    firstRequests.delete(request.socket);
    clearTimeout(first.timer);
    if (request.complete) return;
    const leftMs = Math.max(0, timeouts.requestMs - (performance.now() - first.openedMs));
    const timer = setTimeout(expire, leftMs, server, request.socket).unref();
    const done = (): void => clearTimeout(timer);
    request.once('end', done);
    response.once('close', done);
  });
}
