import { createServer } from 'node:http';
import { notifyParent, serveParent } from '../ipc.js';

/** What the relay sink reports. */
export interface RelaySinkStats {
  received: number;
  /** Distinct `webhook-id`s. */
  distinct: number;
  firstAtMs: number | undefined;
  lastAtMs: number | undefined;
}

/**
 * A relay's endpoint in a process of its own: a bare node:http server that reads each body, records when each
 * `webhook-id` first came, and answers 204 (signatures are checked by the tests, not here: the bench times geohook).
 */
let arrivals = new Map<string, number>();
let stats: RelaySinkStats = { received: 0, distinct: 0, firstAtMs: undefined, lastAtMs: undefined };
const server = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    const now = Date.now();
    const id = String(request.headers['webhook-id']);
    stats.firstAtMs ??= now;
    stats.lastAtMs = now;
    stats.received += 1;
    if (!arrivals.has(id)) arrivals.set(id, now);
    stats.distinct = arrivals.size;
    response.writeHead(204).end();
  });
});
server.keepAliveTimeout = 60_000;
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const address = server.address();
serveParent({
  stats: (): RelaySinkStats => stats,
  /** Epoch ms each webhook-id first came. */
  arrivals: (): Record<string, number> => Object.fromEntries(arrivals),
  reset: () => {
    arrivals = new Map();
    stats = { received: 0, distinct: 0, firstAtMs: undefined, lastAtMs: undefined };
  },
  close: async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  },
});
notifyParent('ready', { port: typeof address === 'object' && address !== null ? address.port : 0 });
