import type { PageReading } from '../arcgis-request/read-layer-pages.js';
import { pathOf, urlWithoutToken } from '../arcgis-request/redact.js';
import { AdminApiError } from '../errors.js';
import type { MirrorLayer } from './column-types.js';
import type { EncodedPage } from './encode-page.js';
import { startEncoderThread, threadErrorOf, type ThreadError } from './encoder-thread.js';

/** Pages of layers read into COPY lines, on a thread of their own; `close` ends the thread. */
export interface PageEncoder {
  /** The {@link PageReading} of a layer's pages into the COPY lines of its table. */
  of(layer: MirrorLayer): PageReading<EncodedPage>;
  close(): Promise<void>;
}

/**
 * The bytes of a body in an array buffer of their own, copied once: `stream/consumers`' `arrayBuffer` makes a `Blob`
 * of the chunks and copies it again, and `Buffer.concat` may give a slice of Node's shared pool, which cannot be handed
 * over to the thread.
 */
async function bytesOf(body: AsyncIterable<Uint8Array>): Promise<Uint8Array<ArrayBuffer>> {
  const chunks: Uint8Array[] = [];
  let length = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    length += chunk.length;
  }
  const bytes = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return bytes;
}

/**
 * The error of an answer the encoder could not read (not JSON, a row the table cannot hold), as a bad answer's; a
 * geometry past the mirror's limits keeps its own code.
 */
function unreadable(url: URL, error: ThreadError): Error {
  if (error.code !== undefined) return threadErrorOf(error);
  const clean = urlWithoutToken(url.href);
  const reason = error.name === 'SyntaxError' ? `the answer is not JSON (${error.message})` : error.message;
  return new AdminApiError(`${pathOf(clean)}: ${reason}`, { serverCode: undefined, messages: [reason], url: clean, response: undefined });
}

/**
 * Reads pages of layers' `query` (for the mirror's initial copy) into the COPY lines of their tables: each answer's
 * bytes go, as they arrive, to a worker thread that parses them (BigInteger values exact) and encodes the rows
 * ({@link encodePage}), so that reading the next pages and writing to PostgreSQL go on meanwhile. One thread serves
 * every layer of a copy; it starts at once, while the copy reads the service and makes its tables. The answers are
 * checked as any (an error inside an HTTP 200 body throws, a refused token is renewed once).
 */
export function createPageEncoder(): PageEncoder {
  const thread = startEncoderThread('page encoder');
  return {
    of: (layer) => ({
      async read(session, url) {
        // The body's bytes in an array buffer of their own, handed over to the thread.
        return session.readTo(url, async (body) => {
          const bytes = await bytesOf(body);
          const page = await thread.request<EncodedPage>({ kind: 'page', layer, body: bytes }, (error) => unreadable(url, error), [
            bytes.buffer,
          ]);
          return { ...page, close: async () => {} };
        });
      },
      extent: (page) => ({ rows: page.rows, lastObjectId: page.lastObjectId }),
    }),
    close: () => thread.close(),
  };
}
