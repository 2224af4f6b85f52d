import { loadUndici } from '../commonjs/undici.js';
import { DEFAULT_MAX_RESPONSE_BYTES, type RelayFetch } from './deliver.js';

/** Options of {@link createRelayTransport}. */
export interface RelayTransportOptions {
  /** Connections kept open per route origin. @defaultValue 128 */
  connections?: number;
  /** Bytes of an answer's body read before the connection is let go (a longer body closes it). @defaultValue 4096 */
  maxResponseBytes?: number;
}

/** A relay's HTTP client: `fetch` for `deliver`, and the pool of connections it keeps. */
export interface RelayTransport {
  fetch: RelayFetch;
  close(): Promise<void>;
}

/**
 * The HTTP client of relay workers: undici's `request` on a keep-alive pool, behind the narrow `fetch` that
 * `deliver` calls. It costs about half the CPU of the global `fetch` per try (no web streams, no `Response`), which
 * is what a relay's throughput is bound by. Redirects are not followed (undici's `request` follows none); the
 * body is read up to `maxResponseBytes` and dropped here, so `deliver` gets none.
 */
export function createRelayTransport(options: RelayTransportOptions = {}): RelayTransport {
  const { connections = 128, maxResponseBytes = DEFAULT_MAX_RESPONSE_BYTES } = options;
  const { Agent, request } = loadUndici();
  const agent = new Agent({ connections, keepAliveTimeout: 60_000 });
  return {
    async fetch(url, init) {
      const answer = await request(url, { method: 'POST', headers: init.headers, body: init.body, signal: init.signal, dispatcher: agent });
      // Past the cap, dump() stops reading and the connection is closed: only the status counts.
      await answer.body.dump({ limit: maxResponseBytes }).catch(() => undefined);
      const { headers } = answer;
      return {
        status: answer.statusCode,
        headers: {
          get: (name) => {
            const value = headers[name.toLowerCase()];
            return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
          },
        },
        body: null,
      };
    },
    close: () => agent.close(),
  };
}
