import { createServer } from 'node:http';
import { notifyParent, serveParent } from '../ipc.js';
import { SIGNATURE_HEADER } from '../payloads.js';

/** What the sink reports. */
export interface SinkStats {
  received: number;
  /** Requests that carried a signature header. */
  signed: number;
  firstAtMs: number | undefined;
  lastAtMs: number | undefined;
}

/** The emulator's target: a bare node:http server that reads each body and answers 204. */
const stats: SinkStats = { received: 0, signed: 0, firstAtMs: undefined, lastAtMs: undefined };
const server = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    const now = Date.now();
    stats.firstAtMs ??= now;
    stats.lastAtMs = now;
    stats.received += 1;
    if (typeof request.headers[SIGNATURE_HEADER] === 'string') stats.signed += 1;
    response.writeHead(204).end();
  });
});
server.keepAliveTimeout = 60_000;
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const address = server.address();
serveParent({
  stats: (): SinkStats => stats,
  close: async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  },
});
notifyParent('ready', { port: typeof address === 'object' && address !== null ? address.port : 0 });
