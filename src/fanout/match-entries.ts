import type { RedisClient } from '../redis/connection.js';
import type { Destination } from './destination.js';
import { eventLayersOf, readEventLayers } from './event-layers.js';
import { parseLoggedEvent, type LogEntry } from './event-log.js';
import { compareLogIds } from './log-id.js';
import type { EmittedType } from './route-match.js';
import { isWholeEvent, type RoutedEvent, type RoutedHead } from './routed-event.js';

/** The entries of a hand-over and, per destination, the indexes of those it takes. */
export interface MatchedEntries {
  entries: readonly LogEntry<RoutedHead>[];
  taken: Map<Destination, number[]>;
}

/** Whether the heads of change events are all `destinations` read (none has a row filter): the log is read by {@link parseLogHeads}. */
export const readsHeads = (destinations: readonly Destination[]): boolean =>
  destinations.every(({ matches }) => matches.head !== undefined);

/** An entry with its event whole: parsed again when it holds a head. */
const wholeEntry = (entry: LogEntry<RoutedHead>): LogEntry =>
  isWholeEvent(entry.event) ? (entry as LogEntry) : { ...entry, event: parseLoggedEvent(entry.data) };

/**
 * Which entries of the log `read` each destination takes: its filter matches, and (unless `readingBack`) the entry
 * came after it was made. A crossing a destination takes as `change.entered` or `change.left` is an entry of its own,
 * appended: the same job id, the event with that type. The layers' fields that `where` filters read come from Redis
 * (only when one of the destinations has one). Entries that hold a change event's head are matched by their heads
 * when every destination can ({@link readsHeads}), else parsed whole.
 */
export async function matchEntries(
  connection: RedisClient,
  prefix: string,
  entries: readonly LogEntry<RoutedHead>[],
  destinations: readonly Destination[],
  { readingBack = false } = {},
): Promise<MatchedEntries> {
  if (readsHeads(destinations)) return matchHeads(entries, destinations, readingBack);
  const read = entries.map(wholeEntry);
  const layers = destinations.some(({ matches }) => matches.readsLayers) ? await readEventLayers(connection, prefix, read) : new Map();
  const all = [...read];
  const variants = new Map<string, number>();
  const variantOf = (index: number, type: EmittedType): number => {
    const key = `${index}\n${type}`;
    let at = variants.get(key);
    if (at === undefined) {
      const entry = read[index]!;
      const event = { ...entry.event, type } as RoutedEvent;
      at = all.push({ id: entry.id, jobId: entry.jobId, name: type, data: JSON.stringify(event), event }) - 1;
      variants.set(key, at);
    }
    return at;
  };
  const taken = new Map<Destination, number[]>(destinations.map((destination) => [destination, []]));
  const bounded = boundedOf(read, destinations, readingBack);
  read.forEach((entry, index) => {
    const { id, event } = entry;
    const eventLayers = layers.size === 0 ? undefined : eventLayersOf(layers, entry);
    for (const destination of destinations) {
      if (bounded.has(destination) && compareLogIds(id, destination.after!) <= 0) continue;
      const verdict = destination.matches(event, eventLayers);
      if (verdict !== false) taken.get(destination)!.push(verdict === true ? index : variantOf(index, verdict));
    }
  });
  return { entries: all, taken };
}

/** {@link matchEntries} of destinations without row filters: by each event's head (no crossings). */
function matchHeads(read: readonly LogEntry<RoutedHead>[], destinations: readonly Destination[], readingBack: boolean): MatchedEntries {
  const taken = new Map<Destination, number[]>(destinations.map((destination) => [destination, []]));
  const bounded = boundedOf(read, destinations, readingBack);
  read.forEach(({ id, event }, index) => {
    for (const destination of destinations) {
      if (bounded.has(destination) && compareLogIds(id, destination.after!) <= 0) continue;
      if (destination.matches.head!(event)) taken.get(destination)!.push(index);
    }
  });
  return { entries: read, taken };
}

/** The destinations whose `after` is at or past the first entry read (the entries are in the log's order: only those compare each). */
const boundedOf = (read: readonly LogEntry<RoutedHead>[], destinations: readonly Destination[], readingBack: boolean): Set<Destination> => {
  const first = read[0]?.id;
  return new Set(
    destinations.filter(({ after }) => !readingBack && after !== undefined && first !== undefined && compareLogIds(first, after) <= 0),
  );
};
