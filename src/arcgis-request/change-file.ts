import { createWriteStream } from 'node:fs';
import { mkdtemp, open, rm, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GeohookError } from '../errors.js';
import { ChangeFileIndexer, type ChangeFileIndex, type ChangeListKind } from './change-file-index.js';
import { isUnsafeInteger, parseExactJson } from './parse-exact-json.js';
import { utf8Text } from './utf8-text.js';

/** One list of a layer's changes in a change file. */
export interface ChangeList {
  layerId: number;
  kind: ChangeListKind;
  /** How many elements it holds. */
  length: number;
}

/**
 * The answer of `extractChanges`, read a batch at a time: its lists (each layer's adds, updates, deleted ids, or
 * ids only) and the small values beside them. A file spooled to disk holds only the lists' offsets in memory.
 */
export interface ChangeFile {
  /** Whether it has an `edits` array (a file without one is not a change file). */
  hasEdits: boolean;
  lists: readonly ChangeList[];
  /** The other top-level values (`layerServerGens`). */
  root: Readonly<Record<string, unknown>>;
  /** Elements `[from, to)` of list `list` (an index in {@link lists}), parsed; BigInteger values beyond 2^53 as decimal strings. */
  read(list: number, from: number, to: number): Promise<unknown[]>;
  /** Lets go of the file (a spooled one is deleted). */
  close(): Promise<void>;
}

/** A change file already in memory (a synchronous answer): its lists are the body's arrays. */
export function changeFileOf(body: Record<string, unknown>): ChangeFile {
  const lists: { list: ChangeList; elements: unknown[] }[] = [];
  const kinds: [string, string, ChangeListKind][] = [
    ['features', 'adds', 'adds'],
    ['features', 'updates', 'updates'],
    ['features', 'deleteIds', 'deleteIds'],
    ['objectIds', 'adds', 'objectIds.adds'],
    ['objectIds', 'updates', 'objectIds.updates'],
    ['objectIds', 'deletes', 'objectIds.deletes'],
    ['attachments', 'adds', 'attachments.adds'],
    ['attachments', 'updates', 'attachments.updates'],
    ['attachments', 'deleteIds', 'attachments.deleteIds'],
  ];
  for (const edit of Array.isArray(body.edits) ? (body.edits as unknown[]) : []) {
    if (typeof edit !== 'object' || edit === null) continue;
    const { id } = edit as { id?: unknown };
    if (typeof id !== 'number') continue;
    for (const [group, name, kind] of kinds) {
      const holder = (edit as Record<string, unknown>)[group];
      const elements = typeof holder === 'object' && holder !== null ? (holder as Record<string, unknown>)[name] : undefined;
      if (Array.isArray(elements)) lists.push({ list: { layerId: id, kind, length: elements.length }, elements });
    }
  }
  const { edits: _edits, ...root } = body;
  return {
    hasEdits: Array.isArray(body.edits),
    lists: lists.map(({ list }) => list),
    root,
    read: (list, from, to) => Promise.resolve(lists[list]!.elements.slice(from, to)),
    close: () => Promise.resolve(),
  };
}

const MINUS = 0x2d;

/** The first pair of `pairs` (ascending offsets, two by two) that starts at or after `offset`: its index. */
function firstPairFrom(pairs: readonly number[], offset: number): number {
  let low = 0;
  let high = pairs.length / 2;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (pairs[middle * 2]! < offset) low = middle + 1;
    else high = middle;
  }
  return low * 2;
}

/**
 * The JSON text of `bytes` (file bytes from offset `first`) with each integer beyond 2^53 among `longIntegers`
 * quoted, so that `JSON.parse` reads it as a string with every digit.
 */
function exactText(bytes: Buffer, first: number, longIntegers: readonly number[]): string {
  const pieces: string[] = [];
  let copied = 0;
  for (let pair = firstPairFrom(longIntegers, first); pair < longIntegers.length && longIntegers[pair]! < first + bytes.length; pair += 2) {
    let start = longIntegers[pair]! - first;
    const end = longIntegers[pair + 1]! - first;
    if (!isUnsafeInteger(bytes.toString('latin1', start, end))) continue;
    if (start > 0 && bytes[start - 1] === MINUS) start -= 1;
    pieces.push(utf8Text(bytes.subarray(copied, start)), '"', bytes.toString('latin1', start, end), '"');
    copied = end;
  }
  if (copied === 0) return utf8Text(bytes);
  pieces.push(utf8Text(bytes.subarray(copied)));
  return pieces.join('');
}

/** Options of {@link spoolChangeFile}. */
export interface SpoolOptions {
  /** Where the file is written (a folder of its own is made in it). @defaultValue os.tmpdir() */
  dir?: string;
}

/**
 * Writes `body` (an `extractChanges` result as it downloads) to a file of its own while indexing it
 * ({@link ChangeFileIndexer}), so that no more than a batch of it is ever in memory. Throws a `SyntaxError` when
 * the body is not the JSON object of a change file.
 */
export async function spoolChangeFile(body: AsyncIterable<Uint8Array>, options: SpoolOptions = {}): Promise<ChangeFile> {
  const folder = await mkdtemp(join(options.dir ?? tmpdir(), 'geohook-changes-'));
  const path = join(folder, 'changes.json');
  const indexer = new ChangeFileIndexer();
  let index: ChangeFileIndex;
  try {
    const indexing = new Transform({
      transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
        try {
          indexer.write(chunk);
          callback(null, chunk);
        } catch (err) {
          callback(err as Error);
        }
      },
    });
    await pipeline(body, indexing, createWriteStream(path));
    index = indexer.end();
  } catch (err) {
    await rm(folder, { recursive: true, force: true });
    throw err instanceof SyntaxError
      ? new GeohookError('GEOHOOK_ERR_FOLLOW_UP', `the extractChanges result is not a change file: ${err.message}`)
      : err;
  }
  const root = Object.fromEntries([...index.root].map(([key, text]) => [key, parseExactJson(text)]));
  const lists = index.lists.filter((list): list is typeof list & { layerId: number } => list.layerId !== undefined);
  let handle: FileHandle | undefined;
  return {
    hasEdits: index.hasEdits,
    lists: lists.map(({ layerId, kind, starts }) => ({ layerId, kind, length: starts.length })),
    root,
    async read(list, from, to) {
      const { starts, ends, longIntegers } = lists[list]!;
      const end = Math.min(to, starts.length);
      if (from >= end) return [];
      handle ??= await open(path, 'r');
      const first = starts[from]!;
      const bytes = Buffer.allocUnsafe(ends[end - 1]! - first);
      const { bytesRead } = await handle.read(bytes, 0, bytes.length, first);
      if (bytesRead !== bytes.length) throw new Error(`the change file ${path} is shorter than indexed`);
      return JSON.parse(`[${exactText(bytes, first, longIntegers)}]`) as unknown[];
    },
    async close() {
      await handle?.close();
      await rm(folder, { recursive: true, force: true });
    },
  };
}
