import { createServer, type Server } from 'node:http';

/**
 * A relay route's endpoint for the fault scenarios: a node:http server on a fixed port that answers 204 and records
 * every `webhook-id` it took, per path (one path per route). `stop()` closes the port (tries are refused) until
 * `start()` opens it again.
 */
export class RelaySink {
  readonly port: number;
  /** Per path, each webhook-id with how many times it was taken. */
  readonly taken = new Map<string, Map<string, number>>();
  #server: Server | undefined;

  constructor(port: number) {
    this.port = port;
  }

  async start(): Promise<void> {
    const server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        const path = request.url ?? '';
        const ids = this.taken.get(path) ?? new Map<string, number>();
        this.taken.set(path, ids);
        const id = String(request.headers['webhook-id']);
        ids.set(id, (ids.get(id) ?? 0) + 1);
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.#server = server;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }

  /** Distinct events taken at `path`. */
  distinct(path: string): number {
    return this.taken.get(path)?.size ?? 0;
  }

  /** Requests taken at `path` beyond one per event. */
  repeats(path: string): number {
    return [...(this.taken.get(path)?.values() ?? [])].reduce((sum, count) => sum + count - 1, 0);
  }
}
