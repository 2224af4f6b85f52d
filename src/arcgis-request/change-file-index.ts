/** The lists of one layer in an `extractChanges` result: rows (`adds`, `updates`), deleted ids, or ids only. */
export type ChangeListKind =
  | 'adds'
  | 'updates'
  | 'deleteIds'
  | 'objectIds.adds'
  | 'objectIds.updates'
  | 'objectIds.deletes'
  | 'attachments.adds'
  | 'attachments.updates'
  | 'attachments.deleteIds';

/** Where the elements of one list lie in the file: byte offsets, in file order. */
export interface ChangeListIndex {
  /** The layer's `id`; undefined when the file never gave it. */
  layerId: number | undefined;
  kind: ChangeListKind;
  /** Each element's first byte. */
  starts: number[];
  /** Each element's end: the byte after its last. */
  ends: number[];
  /**
   * Where the integers of 16 digits or more outside strings are (which may be beyond 2^53): pairs of offsets, the
   * first digit's and the byte after the last, so that they can be read as strings without parsing twice.
   */
  longIntegers: number[];
}

/** What a change file holds besides its lists: each other top-level value's JSON text (`layerServerGens`, `error`). */
export interface ChangeFileIndex {
  /** Whether the file has a top-level `edits` array: a result without one is not a change file. */
  hasEdits: boolean;
  lists: ChangeListIndex[];
  root: Map<string, string>;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;
const ZERO = 0x30;
const NINE = 0x39;
const DOT = 0x2e;
const LOWER_E = 0x65;
const UPPER_E = 0x45;
const PLUS = 0x2b;
const MINUS = 0x2d;

/** An integer of this many digits may be beyond 2^53 (`Number.MAX_SAFE_INTEGER` has 16). */
const LONG_DIGITS = 16;

const isSpace = (byte: number): boolean => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
const endsPrimitive = (byte: number): boolean => byte === COMMA || byte === CLOSE_OBJECT || byte === CLOSE_ARRAY || isSpace(byte);

/** The containers the index follows: the root object, `edits`, one edit, its `features`, `objectIds` or `attachments`, a list. */
type Role = 'root' | 'edits' | 'edit' | 'features' | 'objectIds' | 'attachments' | 'list';

interface Frame {
  role: Role;
  /** Objects: the key being read or last read; arrays: undefined. */
  key: string | undefined;
  /** Expecting a key (objects) or a value (arrays), rather than `,` or the close. */
  expecting: boolean;
  /** `edit`: its lists, given the layer id when the edit closes. */
  lists?: ChangeListIndex[];
  layerId?: number;
  /** `list`: the list it fills. */
  list?: ChangeListIndex;
}

/** What to do with a value being skipped, once it ends. */
type Done = { what: 'element'; list: ChangeListIndex } | { what: 'capture'; key: string; into: 'root' | 'id' } | { what: 'skip' };

const LIST_KEYS: Readonly<Record<'features' | 'objectIds' | 'attachments', Readonly<Record<string, ChangeListKind>>>> = {
  features: { adds: 'adds', updates: 'updates', deleteIds: 'deleteIds' },
  objectIds: { adds: 'objectIds.adds', updates: 'objectIds.updates', deletes: 'objectIds.deletes' },
  attachments: { adds: 'attachments.adds', updates: 'attachments.updates', deleteIds: 'attachments.deleteIds' },
};

/**
 * Indexes an `extractChanges` result as its bytes arrive, in one pass and without holding it: the byte offsets of
 * every feature (and deleted id) of every layer's lists, so that they can be read back a batch at a time, and the
 * small top-level values as text. Strings are skipped with `indexOf`; the rest is followed byte by byte. It checks
 * the structure it follows (brackets balance, a top-level object); the elements themselves are checked when read.
 */
export class ChangeFileIndexer {
  readonly #lists: ChangeListIndex[] = [];
  readonly #root = new Map<string, string>();
  readonly #maxCaptureBytes: number;
  readonly #stack: Frame[] = [];
  /** Bytes seen before the current chunk. */
  #offset = 0;
  #started = false;
  #finished = false;
  #hasEdits = false;

  // A key being read (objects of the followed containers).
  #key: number[] | undefined;
  #keyEscape = false;

  // A value being skipped: its nesting depth (0 for a string or a primitive), and what to do when it ends.
  #skipping: Done | undefined;
  #depth = 0;
  #inString = false;
  #escape = false;
  #primitive = false;
  /** Digits in a row, outside strings, and whether they follow a `.` or an exponent (not an integer then). */
  #digits = 0;
  #fraction = false;
  /** A top-level value kept as text: its pieces, their size, and where it starts in the current chunk. */
  #capture: Buffer[] = [];
  #captureBytes = 0;
  #captureStart: number | undefined;

  /** @param maxCaptureBytes the largest top-level value kept as text (larger ones are dropped). @defaultValue 1 MiB */
  constructor(maxCaptureBytes = 1024 * 1024) {
    this.#maxCaptureBytes = maxCaptureBytes;
  }

  /** Reads the next bytes of the file. Throws a `SyntaxError` where the file stops being the JSON it follows. */
  write(chunk: Uint8Array): void {
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let index = 0;
    while (index < bytes.length) {
      if (this.#skipping !== undefined) index = this.#skip(bytes, index);
      else if (this.#key !== undefined) index = this.#readKey(bytes, index);
      else index = this.#structure(bytes, index);
    }
    if (this.#skipping?.what === 'capture' && this.#captureStart !== undefined) this.#keep(bytes.subarray(this.#captureStart));
    this.#captureStart = this.#skipping?.what === 'capture' ? 0 : undefined;
    this.#offset += bytes.length;
  }

  /** The index, once the last bytes were written. Throws a `SyntaxError` when the file ended early. */
  end(): ChangeFileIndex {
    if (!this.#finished) throw new SyntaxError('the change file ended before its top-level object closed');
    return { hasEdits: this.#hasEdits, lists: this.#lists, root: this.#root };
  }

  #keep(piece: Buffer): void {
    if (this.#captureBytes + piece.length > this.#maxCaptureBytes) {
      this.#captureBytes = Number.POSITIVE_INFINITY;
      this.#capture = [];
      return;
    }
    this.#captureBytes += piece.length;
    this.#capture.push(Buffer.from(piece));
  }

  /** Starts skipping the value whose first byte is `bytes[index]`; returns where to go on. */
  #startValue(bytes: Buffer, index: number, done: Done): number {
    const byte = bytes[index]!;
    this.#skipping = done;
    this.#depth = 0;
    this.#inString = false;
    this.#escape = false;
    this.#primitive = false;
    this.#digits = 0;
    this.#fraction = false;
    this.#capture = [];
    this.#captureBytes = 0;
    this.#captureStart = done.what === 'capture' ? index : undefined;
    if (done.what === 'element') done.list.starts.push(this.#offset + index);
    if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) this.#depth = 1;
    else if (byte === QUOTE) this.#inString = true;
    else {
      this.#primitive = true;
      return index;
    }
    return index + 1;
  }

  /** Goes on skipping a value; returns the index after the bytes consumed. */
  #skip(bytes: Buffer, start: number): number {
    const length = bytes.length;
    // The hot loop works on locals, written back when it leaves.
    let index = start;
    let digits = this.#digits;
    let fraction = this.#fraction;
    let depth = this.#depth;
    let ended = false;
    while (index < length) {
      if (this.#inString) {
        const end = this.#stringEnd(bytes, index);
        if (end === -1) {
          index = length;
          break;
        }
        this.#inString = false;
        index = end + 1;
        if (depth === 0) {
          ended = true;
          break;
        }
        continue;
      }
      const byte = bytes[index]!;
      if (byte >= ZERO && byte <= NINE) {
        digits += 1;
        index += 1;
        continue;
      }
      if (digits >= LONG_DIGITS && !fraction && byte !== DOT && byte !== LOWER_E && byte !== UPPER_E) this.#longInteger(index, digits);
      digits = 0;
      fraction = byte === DOT || byte === LOWER_E || byte === UPPER_E || (fraction && (byte === PLUS || byte === MINUS));
      if (this.#primitive) {
        if (endsPrimitive(byte)) {
          ended = true;
          break;
        }
      } else if (byte === QUOTE) this.#inString = true;
      else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) depth += 1;
      else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
        depth -= 1;
        if (depth === 0) {
          index += 1;
          ended = true;
          break;
        }
      }
      index += 1;
    }
    this.#digits = digits;
    this.#fraction = fraction;
    this.#depth = depth;
    if (ended) this.#finishSkip(this.#offset + index, bytes, index);
    return index;
  }

  /** An integer of `digits` digits ended at `bytes[index]`: where it is, when in a list. */
  #longInteger(index: number, digits: number): void {
    if (this.#skipping?.what !== 'element') return;
    const end = this.#offset + index;
    this.#skipping.list.longIntegers.push(end - digits, end);
  }

  /** The index of the quote that closes the string being skipped, or -1 when it goes on past `bytes`. */
  #stringEnd(bytes: Buffer, start: number): number {
    let index = start;
    if (this.#escape) {
      this.#escape = false;
      index += 1;
    }
    for (;;) {
      const quote = bytes.indexOf(QUOTE, index);
      const stop = quote === -1 ? bytes.length : quote;
      // The backslashes just before the quote (or the chunk's end): an odd run escapes what follows it.
      let backslashes = 0;
      while (stop - backslashes - 1 >= index && bytes[stop - backslashes - 1] === BACKSLASH) backslashes += 1;
      const escaped = backslashes % 2 === 1;
      if (quote === -1) {
        this.#escape = escaped;
        return -1;
      }
      if (!escaped) return quote;
      index = quote + 1;
      if (index >= bytes.length) return -1;
    }
  }

  /** Ends the skipped value at file offset `end` (`bytes[index]` is the first byte after it, in this chunk). */
  #finishSkip(end: number, bytes: Buffer, index: number): void {
    const done = this.#skipping!;
    this.#skipping = undefined;
    if (done.what === 'element') done.list.ends.push(end);
    else if (done.what === 'capture') {
      this.#keep(bytes.subarray(this.#captureStart ?? 0, index));
      this.#captureStart = undefined;
      const text = Number.isFinite(this.#captureBytes) ? Buffer.concat(this.#capture).toString('utf8') : undefined;
      this.#capture = [];
      if (text !== undefined && done.into === 'root') this.#root.set(done.key, text);
      if (text !== undefined && done.into === 'id') {
        const frame = this.#stack[this.#stack.length - 1]!;
        const id = Number(text);
        if (Number.isInteger(id)) frame.layerId = id;
      }
    }
    this.#valueEnded();
  }

  /** A value of the top frame ended: `,` or the close comes next. */
  #valueEnded(): void {
    const frame = this.#stack[this.#stack.length - 1];
    if (frame === undefined) this.#finished = true;
    else frame.expecting = false;
  }

  /** Reads an object key's bytes up to its closing quote. */
  #readKey(bytes: Buffer, start: number): number {
    const key = this.#key!;
    for (let index = start; index < bytes.length; index += 1) {
      const byte = bytes[index]!;
      if (this.#keyEscape) this.#keyEscape = false;
      else if (byte === BACKSLASH) this.#keyEscape = true;
      else if (byte === QUOTE) {
        const frame = this.#stack[this.#stack.length - 1]!;
        frame.key = JSON.parse(`"${Buffer.from(key).toString('utf8')}"`) as string;
        this.#key = undefined;
        return index + 1;
      }
      key.push(byte);
    }
    return bytes.length;
  }

  /** Reads the structure between values: brackets, keys, colons and commas of the followed containers. */
  #structure(bytes: Buffer, index: number): number {
    const byte = bytes[index]!;
    if (isSpace(byte)) return index + 1;
    const frame = this.#stack[this.#stack.length - 1];
    if (frame === undefined) {
      if (this.#finished) throw new SyntaxError('the change file goes on after its top-level object');
      if (this.#started || byte !== OPEN_OBJECT) throw new SyntaxError('a change file is a JSON object');
      this.#started = true;
      this.#stack.push({ role: 'root', key: undefined, expecting: true });
      return index + 1;
    }
    const isArray = frame.role === 'edits' || frame.role === 'list';
    if (byte === (isArray ? CLOSE_ARRAY : CLOSE_OBJECT)) {
      this.#close(frame);
      return index + 1;
    }
    if (!frame.expecting) {
      if (byte !== COMMA)
        throw new SyntaxError(`unexpected ${String.fromCharCode(byte)} at byte ${this.#offset + index} of the change file`);
      frame.expecting = true;
      if (!isArray) frame.key = undefined;
      return index + 1;
    }
    if (!isArray && frame.key === undefined) {
      if (byte !== QUOTE) throw new SyntaxError(`a key was expected at byte ${this.#offset + index} of the change file`);
      this.#key = [];
      return index + 1;
    }
    if (!isArray && byte === COLON) return index + 1;
    return this.#value(frame, bytes, index);
  }

  /** A value of a followed container starts at `bytes[index]`. */
  #value(frame: Frame, bytes: Buffer, index: number): number {
    const byte = bytes[index]!;
    const key = frame.key ?? '';
    const push = (child: Frame): number => {
      this.#stack.push(child);
      return index + 1;
    };
    switch (frame.role) {
      case 'root':
        if (key === 'edits' && byte === OPEN_ARRAY) {
          this.#hasEdits = true;
          return push({ role: 'edits', key: undefined, expecting: true });
        }
        return this.#startValue(bytes, index, { what: 'capture', key, into: 'root' });
      case 'edits':
        if (byte === OPEN_OBJECT) return push({ role: 'edit', key: undefined, expecting: true, lists: [] });
        break;
      case 'edit':
        if (key === 'id') return this.#startValue(bytes, index, { what: 'capture', key, into: 'id' });
        if ((key === 'features' || key === 'objectIds' || key === 'attachments') && byte === OPEN_OBJECT)
          return push({ role: key, key: undefined, expecting: true });
        break;
      case 'features':
      case 'objectIds':
      case 'attachments': {
        const kind = LIST_KEYS[frame.role][key];
        if (kind !== undefined && byte === OPEN_ARRAY) {
          const list: ChangeListIndex = { layerId: undefined, kind, starts: [], ends: [], longIntegers: [] };
          this.#stack[this.#stack.length - 2]!.lists!.push(list);
          return push({ role: 'list', key: undefined, expecting: true, list });
        }
        break;
      }
      case 'list':
        return this.#startValue(bytes, index, { what: 'element', list: frame.list! });
    }
    return this.#startValue(bytes, index, { what: 'skip' });
  }

  /** A followed container closed. */
  #close(frame: Frame): void {
    this.#stack.pop();
    if (frame.role === 'edit') {
      for (const list of frame.lists!) {
        list.layerId = frame.layerId;
        this.#lists.push(list);
      }
    }
    this.#valueEnded();
  }
}
