import { mkdirSync, readdirSync } from 'node:fs';
import { open, readFile, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { BaseLogger } from 'pino';
import { ConfigError } from '../errors.js';
import type { AcceptedEvent } from '../events/build-event.js';
import type { StoredEvent } from '../events/envelope.js';
import { activityOf } from '../events/service-activity.js';

/** Options of {@link EventSpool}. */
export interface EventSpoolOptions {
  /** Directory of the spool files; created when missing, readable by its owner only (mode 0700). */
  dir: string;
  log?: Pick<BaseLogger, 'warn'>;
}

/** A spooled event, as {@link EventSpool.drain} hands it back. */
export interface SpooledEvent {
  accepted: AcceptedEvent;
  /** The stored event's JSON: the job data. */
  data: string;
}

interface Waiting {
  line: string;
  resolve: () => void;
  reject: (err: unknown) => void;
}

const FILE = /^spool-\d{13}-\d{6}\.jsonl$/;
/** Events handed to Redis at once while draining. */
const DRAIN_CHUNK = 256;

/**
 * A local, fsync'd, append-only spool of events, for when Redis cannot take them: one JSON line per event
 * (`{"ranges":…,"activity":…,"event":<stored event>}`), in files named by creation time. Appends of one event-loop turn are written and fsync'd together (group
 * commit) before any of them resolves. {@link drain} hands the events back oldest first and deletes a file
 * only once every event in it was stored, so a crash while draining stores some events twice, never none
 * (the receiver's dedup by event id makes the repeat harmless). A torn last line, written by a process
 * that died before its fsync, was never acknowledged and is skipped.
 */
export class EventSpool {
  private readonly dir: string;
  private readonly log: Pick<BaseLogger, 'warn'> | undefined;
  private waiting: Waiting[] = [];
  private writing: Promise<void> = Promise.resolve();
  private file: { name: string; handle: FileHandle } | undefined;
  private sequence = 0;
  /** Files on disk, oldest first (the one being written included). */
  private readonly files: string[];

  constructor(options: EventSpoolOptions) {
    this.dir = options.dir;
    this.log = options.log;
    try {
      // The events are the payloads received: spool files are the owner's alone (0700 directory, 0600 files).
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      this.files = readdirSync(this.dir)
        .filter((name) => FILE.test(name))
        .sort();
    } catch (err) {
      throw new ConfigError(
        `SPOOL_DIR (${this.dir}) cannot be used as the spool: ${(err as Error).message}. Give a directory geohook can create and write, on a persistent volume, or leave SPOOL_DIR unset`,
      );
    }
  }

  /** True while events wait in the spool (new events then queue up behind them, to keep their order). */
  get pending(): boolean {
    return this.files.length > 0 || this.waiting.length > 0;
  }

  /** Resolves once the event, whose stored event's JSON is `data`, is written and fsync'd. */
  append({ ranges, activity }: AcceptedEvent, data: string): Promise<void> {
    const line = `{"ranges":${JSON.stringify(ranges)},"activity":${JSON.stringify(activity ?? null)},"event":${data}}\n`;
    return new Promise((resolve, reject) => {
      if (this.waiting.length === 0) setImmediate(this.flush);
      this.waiting.push({ line, resolve, reject });
    });
  }

  private readonly flush = (): void => {
    const batch = this.waiting;
    if (batch.length === 0) return;
    this.waiting = [];
    this.writing = this.writing.then(async () => {
      try {
        const { handle } = await this.currentFile();
        await handle.write(batch.map((waiting) => waiting.line).join(''));
        await handle.datasync();
        for (const waiting of batch) waiting.resolve();
      } catch (err) {
        for (const waiting of batch) waiting.reject(err);
      }
    });
  };

  private async currentFile(): Promise<{ name: string; handle: FileHandle }> {
    if (this.file !== undefined) return this.file;
    this.sequence += 1;
    const name = `spool-${String(Date.now()).padStart(13, '0')}-${String(this.sequence % 1_000_000).padStart(6, '0')}.jsonl`;
    const handle = await open(join(this.dir, name), 'a', 0o600);
    this.file = { name, handle };
    this.files.push(name);
    return this.file;
  }

  /**
   * Hands every spooled event to `store`, oldest first, and deletes each file once all its events are
   * stored. Stops at the first failure (the rest stays for the next drain). Resolves with the count stored.
   */
  async drain(store: (accepted: AcceptedEvent, data: string) => Promise<unknown>): Promise<number> {
    let stored = 0;
    while (this.files.length > 0) {
      const name = this.files[0]!;
      if (this.file?.name === name) {
        // New appends go to a new file from now on; this one is complete once its last write is done.
        const { handle } = this.file;
        this.file = undefined;
        await this.writing;
        await handle.close();
      }
      const path = join(this.dir, name);
      const events = this.parse(name, await readFile(path, 'utf8'));
      // A chunk's events are handed over at once, in order: the receiver's group commit writes them in
      // that order, many per script call.
      for (let start = 0; start < events.length; start += DRAIN_CHUNK) {
        await Promise.all(events.slice(start, start + DRAIN_CHUNK).map(({ accepted, data }) => store(accepted, data)));
      }
      stored += events.length;
      await unlink(path);
      this.files.shift();
    }
    return stored;
  }

  private parse(name: string, text: string): SpooledEvent[] {
    const events: SpooledEvent[] = [];
    for (const [index, line] of text.split('\n').entries()) {
      if (line === '') continue;
      try {
        events.push(spooledEventOf(JSON.parse(line) as SpoolLine | StoredEvent, line));
      } catch {
        this.log?.warn(
          { file: name, line: index + 1 },
          'spool: an unreadable line (torn by a crash before its fsync, never acknowledged) is skipped',
        );
      }
    }
    return events;
  }

  /** Finishes the writes in hand and closes the file (the spool stays on disk for the next start). */
  async close(): Promise<void> {
    this.flush();
    await this.writing;
    await this.file?.handle.close();
    this.file = undefined;
  }
}

/** A spool line as {@link EventSpool.append} writes it. */
interface SpoolLine {
  ranges: AcceptedEvent['ranges'];
  activity: AcceptedEvent['activity'] | null;
  event: StoredEvent;
}

/**
 * The event of a spool line. A line that is a stored event alone (the spool's earlier format, which kept no
 * ranges) is queued without its ranges: its edits' generations are left to the backfill, which the next
 * delivery of its service finds as a gap.
 */
function spooledEventOf(parsed: SpoolLine | StoredEvent, line: string): SpooledEvent {
  if (!('event' in parsed)) return { accepted: { event: parsed, ranges: [], activity: activityOf(parsed) }, data: line };
  const { ranges, activity, event } = parsed;
  return { accepted: { event, ranges, activity: activity ?? undefined }, data: JSON.stringify(event) };
}
