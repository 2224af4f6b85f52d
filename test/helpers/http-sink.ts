import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';

/** How a sink answers one request, once its whole body has arrived. */
export type SinkHandler = (request: IncomingMessage, response: ServerResponse, body: Buffer) => void;

export interface ReceivedRequest {
  method: string;
  /** The path and query. */
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

/** A node:http receiver on a free loopback port that records every request; closed at teardown. */
export async function startSink(t: Test, handler: SinkHandler): Promise<{ url: string; received: ReceivedRequest[] }> {
  const received: ReceivedRequest[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      received.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body });
      handler(request, response, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

/** A handler that answers every request with `status`. */
export const answerWith =
  (status: number): SinkHandler =>
  (_request, response) =>
    response.writeHead(status).end();
