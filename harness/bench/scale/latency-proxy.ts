import { Agent, createServer, request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** Options of {@link startLatencyProxy}. */
export interface LatencyProxyOptions {
  /** Where requests are forwarded: an http origin (its path is ignored; each request keeps its own). */
  target: URL;
  /** How long to hold each request before forwarding it, ms (0: at once). */
  delayMs: (req: IncomingMessage) => number;
}

/** A running {@link startLatencyProxy}. */
export interface LatencyProxy {
  /** Its loopback origin. */
  url: URL;
  /** Stops listening and closes its connections. */
  close(): Promise<void>;
}

/**
 * A loopback HTTP proxy that models a slow server: each request waits `delayMs(req)`, then goes to `target`
 * with its method, path, headers and body (streamed), and the answer comes back as it came (status, headers,
 * streamed body). Requests are independent: many can wait at once. A request the target refuses is answered 502.
 */
export async function startLatencyProxy(options: LatencyProxyOptions): Promise<LatencyProxy> {
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const server = createServer((req, res) => {
    void sleep(Math.max(0, options.delayMs(req))).then(() => {
      const upstream = request(
        {
          host: options.target.hostname,
          port: options.target.port,
          path: req.url,
          method: req.method,
          headers: req.headers,
          agent,
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => {
        if (res.headersSent) res.destroy();
        else res.writeHead(502).end();
      });
      req.pipe(upstream);
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  const { port } = server.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}`),
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      agent.destroy();
      await closed;
    },
  };
}
