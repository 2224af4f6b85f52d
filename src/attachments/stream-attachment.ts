import { PassThrough } from 'node:stream';
import type { ServiceSession } from '../arcgis-request/service-session.js';

/** Bytes read before deciding whether an answer is an error in an HTTP 200 body (`{"error":…}`) or the attachment. */
const ERROR_PROBE_BYTES = 64 * 1024;

const ERROR_START = '{"error":';

/** The bytes of an attachment, flowing: hand `stream` to the client; `done` settles when the last byte is read. */
export interface FlowingAttachment {
  stream: PassThrough;
  done: Promise<void>;
}

/**
 * Reads the attachment at `url` with the session's token and starts handing it on as soon as its first bytes show
 * it is not an error answer: the bytes flow through `stream` with back-pressure, never held whole. An answer that is
 * an error (in an HTTP 200 JSON body too: a refused token is renewed once) rejects before anything flows. A client
 * that goes away stops the read.
 */
export function streamAttachment(session: ServiceSession, url: URL): Promise<FlowingAttachment> {
  return new Promise((resolve, reject) => {
    let flowing: FlowingAttachment | undefined;
    let finish: (err?: unknown) => void = () => undefined;
    const read = session.readTo(url, async (body) => {
      const chunks = body[Symbol.asyncIterator]();
      const probe: Buffer[] = [];
      let probed = 0;
      let ended = false;
      // Enough bytes to tell an error answer (read whole, to be checked) from the attachment.
      while (probed < ERROR_START.length || (startsAsError(probe) && probed <= ERROR_PROBE_BYTES)) {
        const next = await chunks.next();
        if (next.done === true) {
          ended = true;
          break;
        }
        probe.push(Buffer.from(next.value));
        probed += next.value.length;
      }
      if (startsAsError(probe) && probed <= ERROR_PROBE_BYTES) {
        return { root: parseRoot(Buffer.concat(probe)), close: () => Promise.resolve() };
      }
      const stream = new PassThrough();
      flowing = {
        stream,
        done: new Promise<void>((resolveDone, rejectDone) => (finish = (err) => (err === undefined ? resolveDone() : rejectDone(err)))),
      };
      flowing.done.catch(() => undefined);
      resolve(flowing);
      for (const chunk of probe) if (!(await write(stream, chunk))) return closed(chunks);
      while (!ended) {
        const next = await chunks.next();
        if (next.done === true) break;
        if (!(await write(stream, Buffer.from(next.value)))) return closed(chunks);
      }
      stream.end();
      return { root: {}, close: () => Promise.resolve() };
    });
    read.then(
      () => finish(),
      (err: unknown) => {
        if (flowing === undefined) reject(err);
        else {
          flowing.stream.destroy(err as Error);
          finish(err);
        }
      },
    );
  });
}

const startsAsError = (probe: readonly Buffer[]): boolean =>
  Buffer.concat(probe).subarray(0, ERROR_START.length).toString() === ERROR_START;

/** The top-level values of an error answer; none when it does not parse (it is then handed on as bytes would not be). */
function parseRoot(bytes: Buffer): Record<string, unknown> {
  try {
    return JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
  } catch {
    return { error: { code: 502, message: 'the server answered an unreadable error' } };
  }
}

/** Writes a chunk, waiting while the client is slower than the server; false once the client has gone. */
async function write(stream: PassThrough, chunk: Buffer): Promise<boolean> {
  if (stream.destroyed) return false;
  if (stream.write(chunk)) return true;
  return new Promise((resolve) => {
    const done = (open: boolean) => () => {
      stream.off('drain', onDrain).off('close', onClose);
      resolve(open);
    };
    const onDrain = done(true);
    const onClose = done(false);
    stream.once('drain', onDrain).once('close', onClose);
  });
}

/** The client went away: the server's answer is let go of. */
async function closed(chunks: AsyncIterator<Uint8Array>): Promise<{ root: Record<string, unknown>; close: () => Promise<void> }> {
  await chunks.return?.();
  return { root: {}, close: () => Promise.resolve() };
}
