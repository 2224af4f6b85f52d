import type { Attributes, Geometry } from './types.js';

/** A feature as the store holds it: frozen, replaced (never changed) by an edit. */
export interface Row {
  readonly attributes: Readonly<Attributes>;
  readonly geometry: Geometry | null;
}

/** What one edit did to one feature. */
export type ChangeOp = 'add' | 'update' | 'delete';

/** One feature's change in one server generation: the row after it (for a delete, the row it removed). */
export interface ChangeEntry {
  readonly serverGen: number;
  readonly objectId: number;
  readonly globalId: string;
  readonly op: ChangeOp;
  readonly row: Row;
}

/** Entries a layer keeps before it forgets its oldest generations, whole. @defaultValue 2,000,000 */
export const DEFAULT_CHANGE_LOG_ENTRIES = 2_000_000;

/**
 * A layer's changes in the order of their server generations, for `extractChanges`. Bounded: past `maxEntries`,
 * the oldest generations are forgotten whole, so a range the log still covers is never answered in part; one
 * generation larger than the bound is kept.
 */
export class ChangeLog {
  readonly #entries: ChangeEntry[] = [];
  readonly #maxEntries: number;
  /** Entries forgotten at the head of `#entries` (dropped lazily, in one splice). */
  #start = 0;
  /** The generation of the newest change forgotten: ranges from it on are complete. */
  #forgottenUpTo: number | undefined;

  constructor(maxEntries = DEFAULT_CHANGE_LOG_ENTRIES) {
    this.#maxEntries = maxEntries;
  }

  append(entry: ChangeEntry): void {
    const last = this.#entries.at(-1);
    if (last !== undefined && entry.serverGen < last.serverGen) throw new RangeError('change log entries must come in generation order');
    this.#entries.push(entry);
  }

  /** Forgets the oldest generations while more than `maxEntries` are kept; call after a generation's entries are all in. */
  trim(): void {
    while (this.#entries.length - this.#start > this.#maxEntries) {
      const oldest = this.#entries[this.#start]!.serverGen;
      if (oldest === this.#entries.at(-1)!.serverGen) break;
      this.forget(oldest);
    }
  }

  /**
   * Forgets the generations up to `serverGen`, whether or not they have entries here (the layer's attachments
   * forgot them): a range from before it is no longer answered in full.
   */
  forget(serverGen: number): void {
    while (this.#start < this.#entries.length && this.#entries[this.#start]!.serverGen <= serverGen) this.#start += 1;
    this.#forgottenUpTo = Math.max(this.#forgottenUpTo ?? serverGen, serverGen);
    if (this.#start > 0 && this.#start >= this.#entries.length / 2) {
      this.#entries.splice(0, this.#start);
      this.#start = 0;
    }
  }

  /** The first index at or after `#start` whose generation is greater than `gen`. */
  #after(gen: number): number {
    let low = this.#start;
    let high = this.#entries.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.#entries[middle]!.serverGen <= gen) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /** The entries with `from < serverGen <= to`, oldest first. */
  between(from: number, to: number): ChangeEntry[] {
    return this.#entries.slice(this.#after(from), this.#after(to));
  }

  /** The generation of the newest change, if any. */
  get latestGen(): number | undefined {
    return this.#entries.length > this.#start ? this.#entries.at(-1)!.serverGen : undefined;
  }

  /** The oldest generation a range may start at and still be answered in full; undefined when nothing was forgotten. */
  get forgottenUpTo(): number | undefined {
    return this.#forgottenUpTo;
  }

  /** The generation of the oldest change kept, if any. */
  get oldestGen(): number | undefined {
    return this.#entries[this.#start]?.serverGen;
  }
}
