import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/** One delivery POST: what is sent, and the signal that cuts it short (timeout or close). */
export interface HookRequest {
  headers: Record<string, string>;
  body: Buffer;
  signal: AbortSignal;
}

/**
 * Sends one delivery and resolves with the HTTP status of the answer, whatever it is; rejects when no
 * answer came (network error, or `signal` aborted). Redirects are not followed: a 3xx is the answer.
 */
export type PostHook = (url: string, request: HookRequest) => Promise<number>;

/** A transport that also holds connections: closed with the engine. */
export interface HookTransport {
  post: PostHook;
  close(): void;
}

/**
 * Node's own HTTP client with kept-alive connections: a receiver gets its deliveries over a few reused
 * sockets, as from a real server, and a delivery costs a third of the CPU `fetch` takes.
 */
export function httpTransport(): HookTransport {
  // An idle connection is closed after 4 s (as fetch does), before a receiver's own keep-alive timeout
  // (5 s in Node) can close it under a delivery being sent.
  const kept = { keepAlive: true, timeout: 4000 };
  const agents = { 'http:': new HttpAgent(kept), 'https:': new HttpsAgent(kept) };
  const post: PostHook = (url, { headers, body, signal }) =>
    new Promise<number>((resolve, reject) => {
      const target = new URL(url);
      const secure = target.protocol === 'https:';
      const send = secure ? httpsRequest : httpRequest;
      const request = send(target, {
        method: 'POST',
        agent: secure ? agents['https:'] : agents['http:'],
        headers: { ...headers, 'content-length': String(body.length) },
        signal,
      });
      request.once('response', (response: IncomingMessage) => {
        response.resume(); // the body is not read: drained so the connection is reused
        resolve(response.statusCode ?? 0);
      });
      request.on('error', reject);
      request.end(body);
    });
  return {
    post,
    close() {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}
