import { once } from 'node:events';
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/**
 * Values written one JSON line each to a temporary file and read back in order, in batches: what a snapshot reads
 * (counted before its first event is written) without holding it in memory. The file is removed by `close()`.
 */
export class LineSpool<T> {
  readonly #folder: string;
  readonly #path: string;
  readonly #file: WriteStream;
  #count = 0;

  private constructor(folder: string) {
    this.#folder = folder;
    this.#path = join(folder, 'lines.ndjson');
    this.#file = createWriteStream(this.#path);
  }

  /** Makes a spool in a folder of its own under `dir`. @param dir @defaultValue os.tmpdir() */
  static async open<T>(dir: string = tmpdir()): Promise<LineSpool<T>> {
    return new LineSpool<T>(await mkdtemp(join(dir, 'geohook-spool-')));
  }

  /** How many values were written. */
  get count(): number {
    return this.#count;
  }

  /** Writes `value` as a line; waits while the file's buffer is full. */
  async write(value: T): Promise<void> {
    this.#count += 1;
    if (!this.#file.write(`${JSON.stringify(value)}\n`)) await once(this.#file, 'drain');
  }

  /** Ends writing, then reads the values back in the order they were written, `size` at a time. */
  async *batches(size: number): AsyncGenerator<T[]> {
    if (!this.#file.writableEnded) {
      this.#file.end();
      await once(this.#file, 'finish');
    }
    let batch: T[] = [];
    for await (const line of createInterface({ input: createReadStream(this.#path), crlfDelay: Infinity })) {
      batch.push(JSON.parse(line) as T);
      if (batch.length === size) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
  }

  /** Removes the file. */
  async close(): Promise<void> {
    if (!this.#file.closed) {
      this.#file.destroy();
      await once(this.#file, 'close');
    }
    await rm(this.#folder, { recursive: true, force: true });
  }
}
