import { arrayBuffer } from 'node:stream/consumers';
import { Worker } from 'node:worker_threads';
import { pathOf, urlWithoutToken } from '../arcgis-request/redact.js';
import type { PageReading } from '../changes/read-layer-pages.js';
import { AdminApiError } from '../errors.js';
import type { MirrorLayer } from './column-types.js';
import type { EncodedPage } from './encode-page.js';
import type { EncodeRequest } from './page-encoder-worker.js';

type EncodeReply = { id: number; page: EncodedPage } | { id: number; error: { name: string; message: string } };

/** A {@link PageReading} into COPY lines, on a thread of its own; `close` ends the thread. */
export interface PageEncoder extends PageReading<EncodedPage> {
  close(): Promise<void>;
}

/** The error of an answer the encoder could not read (not JSON, a row the table cannot hold), as a bad answer's. */
function unreadable(url: URL, error: { name: string; message: string }): AdminApiError {
  const clean = urlWithoutToken(url.href);
  const reason = error.name === 'SyntaxError' ? `the answer is not JSON (${error.message})` : error.message;
  return new AdminApiError(`${pathOf(clean)}: ${reason}`, { serverCode: undefined, messages: [reason], url: clean, response: undefined });
}

/**
 * Reads pages of a layer's `query` (for the mirror's initial copy) into the COPY lines of its table: each answer's
 * bytes go, as they arrive, to a worker thread that parses them (BigInteger values exact) and encodes the rows
 * ({@link encodePage}), so that reading the next pages and writing to PostgreSQL go on meanwhile. The answers are
 * checked as any (an error inside an HTTP 200 body throws, a refused token is renewed once).
 */
export function createPageEncoder(layer: MirrorLayer): PageEncoder {
  const worker = new Worker(new URL('./page-encoder-worker.js', import.meta.url), { workerData: { layer } });
  const pending = new Map<number, { resolve: (page: EncodedPage) => void; reject: (err: unknown) => void; url: URL }>();
  let nextId = 0;
  let failure: Error | undefined;
  worker.on('message', (reply: EncodeReply) => {
    const request = pending.get(reply.id);
    pending.delete(reply.id);
    if ('page' in reply) request?.resolve(reply.page);
    else request?.reject(unreadable(request.url, reply.error));
  });
  const fail = (err: Error): void => {
    failure ??= err;
    for (const request of pending.values()) request.reject(err);
    pending.clear();
  };
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`the page encoder's thread exited (code ${code})`)));

  const encode = (url: URL, body: Uint8Array<ArrayBuffer>): Promise<EncodedPage> =>
    new Promise((resolve, reject) => {
      if (failure !== undefined) return reject(failure);
      const id = (nextId += 1);
      pending.set(id, { resolve, reject, url });
      worker.postMessage({ id, body } satisfies EncodeRequest, [body.buffer]);
    });

  return {
    async read(session, url) {
      // The body's bytes in an array buffer of their own, handed over to the thread.
      return session.readTo(url, async (body) => ({
        ...(await encode(url, new Uint8Array(await arrayBuffer(body)))),
        close: async () => {},
      }));
    },
    extent: (page) => ({ rows: page.rows, lastObjectId: page.lastObjectId }),
    async close() {
      await worker.terminate();
    },
  };
}
