import type { RedisClient } from '../redis/connection.js';
import type { ChangeHead, RoutedEvent, RoutedHead } from './routed-event.js';

/**
 * One entry of the event log: the event's job id in its queue, its type, and its data as stored (JSON); `event` parsed
 * whole, or (read by {@link parseLogHeads}) a change event's head.
 */
export interface LogEntry<E extends RoutedHead = RoutedEvent> {
  /** The stream entry id: the log's order. */
  id: string;
  jobId: string;
  name: string;
  data: string;
  /** `data` as Redis holds it, when read as bytes: a stream lane's message body, not encoded again. */
  bytes?: Buffer;
  event: E;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The shape the fan-out reads of an event: a type, and a family (stored events) or a service and layer (change events). */
function isRoutedEvent(value: unknown): value is RoutedEvent {
  if (!isObject(value) || typeof value.type !== 'string') return false;
  return 'family' in value || (isObject(value.service) && isObject(value.layer) && typeof value.layer.id === 'number');
}

/**
 * Where a change event's rows begin in its JSON: the change writer writes its head (id, type, op, hook, service,
 * layer, key) first, then `after` (build-change-events.ts). A quote inside a JSON string is always escaped, so the
 * first `,"after":` of the text is a key; the head's own objects have none, so it is the event's.
 */
const ROWS = ',"after":';

const HEAD_TYPES = new Set(['change.created', 'change.updated', 'change.deleted', 'change.read', 'change.schema']);

function isChangeHead(value: unknown): value is ChangeHead {
  if (!isObject(value) || typeof value.id !== 'string' || typeof value.type !== 'string' || !HEAD_TYPES.has(value.type)) return false;
  if (value.type !== 'change.schema' && typeof value.op !== 'string') return false;
  const { service, layer, key } = value;
  return typeof value.hook === 'string' && isObject(service) && isObject(layer) && typeof layer.id === 'number' && isObject(key);
}

/**
 * The head of a change event from its JSON as the log holds it, parsed without its rows (a row is most of an event);
 * undefined for anything else (a submission, a stored event, JSON written in another order), to be parsed whole.
 * Cut anywhere but at the top level, the text parses to nothing: a head is exactly the whole event's.
 */
export function parseChangeHead(data: string): ChangeHead | undefined {
  const at = data.indexOf(ROWS);
  if (at < 0) return undefined;
  try {
    const head = JSON.parse(`${data.slice(0, at)}}`) as unknown;
    return isChangeHead(head) ? head : undefined;
  } catch {
    return undefined;
  }
}

/** Where the value of the field `name` is among a stream entry's fields as ioredis returns them (name, value, …); -1 if absent. */
export function fieldIndex(fields: readonly string[], name: string): number {
  for (let i = 0; i < fields.length - 1; i += 2) if (fields[i] === name) return i + 1;
  return -1;
}

const fieldOf = (fields: readonly string[], name: string): string | undefined => fields[fieldIndex(fields, name)];

/** The entries of a stream read (`XRANGE`, or one stream of `XREAD`) as ioredis returns them: id, then fields. */
export type RawEntries = readonly [id: string, fields: string[]][];

/** An entry's event parsed whole (an `Error` when it is none). */
export function parseLoggedEvent(data: string): RoutedEvent {
  const event = JSON.parse(data) as unknown;
  if (!isRoutedEvent(event)) throw new Error('data that is no geohook event');
  return event;
}

function parseEntries<E extends RoutedHead>(
  raw: RawEntries,
  skipped: (id: string, err: unknown) => void,
  parse: (data: string) => E,
): LogEntry<E>[] {
  const entries: LogEntry<E>[] = [];
  for (const [id, fields] of raw) {
    const jobId = fieldOf(fields, 'j');
    const data = fieldOf(fields, 'd');
    try {
      if (jobId === undefined || data === undefined) throw new Error('an entry without j and d');
      const event = parse(data);
      entries.push({ id, jobId, name: event.type, data, event });
    } catch (err) {
      skipped(id, err);
    }
  }
  return entries;
}

/**
 * The events among `raw` entries of the log. An entry that is not an event (never written by geohook) is passed over
 * and reported to `skipped`.
 */
export const parseLogEntries = (raw: RawEntries, skipped: (id: string, err: unknown) => void): LogEntry[] =>
  parseEntries(raw, skipped, parseLoggedEvent);

/**
 * As {@link parseLogEntries}, a change event parsed up to its rows (its head: what a reader that reads no rows needs),
 * any other event whole.
 */
export const parseLogHeads = (raw: RawEntries, skipped: (id: string, err: unknown) => void): LogEntry<RoutedHead>[] =>
  parseEntries<RoutedHead>(raw, skipped, (data) => parseChangeHead(data) ?? parseLoggedEvent(data));

/**
 * Entries of the log `key` from `start` (a stream id; `(id` for the entries after it) up to `end` (inclusive; `+`
 * for the newest), at most `count`, parsed by {@link parseLogEntries}; `read` counts every entry read, those passed
 * over included.
 */
export async function readEventLog(
  redis: RedisClient,
  key: string,
  range: { start: string; end?: string; count: number },
  skipped: (id: string, err: unknown) => void,
): Promise<{ entries: LogEntry[]; lastId: string | undefined; read: number }> {
  const raw = await redis.xrange(key, range.start, range.end ?? '+', 'COUNT', range.count);
  return { entries: parseLogEntries(raw, skipped), lastId: raw.at(-1)?.[0], read: raw.length };
}

/** The id of the first entry of the log `key` after `cursor` (a stream id), `undefined` when there is none. */
export async function firstEntryAfter(redis: RedisClient, key: string, cursor: string): Promise<string | undefined> {
  return (await redis.xread('COUNT', 1, 'STREAMS', key, cursor))?.[0]?.[1]?.[0]?.[0];
}
