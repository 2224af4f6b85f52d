import type { RedisClient } from '../redis/connection.js';
import type { Destination } from './destination.js';
import { eventLayersOf, readEventLayers } from './event-layers.js';
import type { LogEntry } from './event-log.js';
import { compareLogIds } from './log-id.js';
import type { EmittedType } from './route-match.js';
import type { RoutedEvent } from './routed-event.js';

/** The entries of a hand-over and, per destination, the indexes of those it takes. */
export interface MatchedEntries {
  entries: readonly LogEntry[];
  taken: Map<Destination, number[]>;
}

/**
 * Which entries of the log `read` each destination takes: its filter matches, and (unless `readingBack`) the entry
 * came after it was made. A crossing a destination takes as `change.entered` or `change.left` is an entry of its own,
 * appended: the same job id, the event with that type. The layers' fields that `where` filters read come from Redis
 * (only when one of the destinations has one).
 */
export async function matchEntries(
  connection: RedisClient,
  prefix: string,
  read: readonly LogEntry[],
  destinations: readonly Destination[],
  { readingBack = false } = {},
): Promise<MatchedEntries> {
  const layers = destinations.some(({ matches }) => matches.readsLayers) ? await readEventLayers(connection, prefix, read) : new Map();
  const entries = [...read];
  const variants = new Map<string, number>();
  const variantOf = (index: number, type: EmittedType): number => {
    const key = `${index}\n${type}`;
    let at = variants.get(key);
    if (at === undefined) {
      const entry = read[index]!;
      const event = { ...entry.event, type } as RoutedEvent;
      at = entries.push({ id: entry.id, jobId: entry.jobId, name: type, data: JSON.stringify(event), event }) - 1;
      variants.set(key, at);
    }
    return at;
  };
  const taken = new Map<Destination, number[]>(destinations.map((destination) => [destination, []]));
  // The entries are in the log's order: only a destination whose `after` is at or past the first compares each.
  const first = read[0]?.id;
  const bounded = new Set(
    destinations.filter(({ after }) => !readingBack && after !== undefined && first !== undefined && compareLogIds(first, after) <= 0),
  );
  read.forEach((entry, index) => {
    const { id, event } = entry;
    const eventLayers = layers.size === 0 ? undefined : eventLayersOf(layers, entry);
    for (const destination of destinations) {
      if (bounded.has(destination) && compareLogIds(id, destination.after!) <= 0) continue;
      const verdict = destination.matches(event, eventLayers);
      if (verdict !== false) taken.get(destination)!.push(verdict === true ? index : variantOf(index, verdict));
    }
  });
  return { entries, taken };
}
