import type { Logger } from 'pino';
import type { MirrorLayer } from './column-types.js';
import { startEncoderThread, threadErrorOf } from './encoder-thread.js';
import type { EncodedRows } from './encoder-worker.js';
import type { EsriRow } from './row-values.js';

/** Rows of a layer into their values in PostgreSQL's text input form (see `RowColumns.values`). */
export type RowEncoding = (layer: MirrorLayer, rows: readonly EsriRow[]) => Promise<(string | null)[][]>;

/** A {@link RowEncoding} on a thread of its own; `close` ends the thread. */
export interface RowEncoder {
  encode: RowEncoding;
  close(): Promise<void>;
}

/**
 * Encodes the rows of change batches on a worker thread (the page encoder's, `encoder-worker.ts`), so that a costly
 * geometry (within the limits of `geometry-limits.ts`) never holds the thread that answers deliveries. The thread is
 * started at the first batch, and again after it failed. Errors come back as they were thrown (a GeohookError with its code, a TypeError).
 */
export function createRowEncoder(log: Logger): RowEncoder {
  let thread: ReturnType<typeof startEncoderThread> | undefined;
  return {
    async encode(layer, rows) {
      if (rows.length === 0) return [];
      // A thread that failed (it ran out of memory) is replaced at the next batch.
      if (thread?.alive() === false) await thread.close();
      if (thread?.alive() !== true) thread = startEncoderThread('row encoder');
      const startedAt = performance.now();
      const { values, threadId } = await thread.request<EncodedRows>({ kind: 'rows', layer, rows }, threadErrorOf);
      log.debug({ layer: layer.name, rows: rows.length, threadId, ms: Math.round(performance.now() - startedAt) }, 'mirror: rows encoded');
      return values;
    },
    async close() {
      await thread?.close();
    },
  };
}
