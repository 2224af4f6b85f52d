import type { ChangeFile, ChangeList } from '../arcgis-request/change-file.js';
import type { EsriFeature } from '../arcgis-request/extract-changes.js';
import type { LayerInfo } from '../arcgis-request/layer-info.js';
import type { LayerFilter } from './change-filter.js';

// The runs of a range's transaction, in the order its events are numbered: each layer's `change.schema`, then its
// lists of creates, updates and deletes (filtered here where the server could not).

/** A run of the transaction: a layer's `change.schema`, or one list of its creates, updates or deletes. */
export type SchemaSegment = { layer: LayerInfo; length: 1; schema: { added: string[]; removed: string[] } };
export type ListSegment = {
  layer: LayerInfo;
  length: number;
  op: 'c' | 'u' | 'd';
  list: number;
  /** Filtered here: the positions in the list of the rows that pass, `length` of them. */
  kept?: number[];
  /** Features whose attachments alone changed: their rows as read now with `query`, not from the file. */
  rows?: unknown[];
};

export type Segment = SchemaSegment | ListSegment;

/** Rows read at once when a filter is evaluated here. */
const FILTER_CHUNK = 2000;

/** The op of the events of a change list; none for the attachment lists. */
export const OP_OF_LIST: Readonly<Partial<Record<ChangeList['kind'], 'c' | 'u' | 'd'>>> = { adds: 'c', updates: 'u', deleteIds: 'd' };

/** An element of a list that is a row: it has attributes. */
export const isFeature = (value: unknown): value is EsriFeature =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as EsriFeature).attributes === 'object' &&
  (value as EsriFeature).attributes !== null;

/** The layers' schema changes since geohook last read them: the fields added and removed. */
export function schemaChangesOf(layers: readonly LayerInfo[], known: (string[] | undefined)[]): SchemaSegment[] {
  return layers.flatMap((layer, index): SchemaSegment[] => {
    const before = known[index];
    const now = layer.fields.map((field) => field.name).sort();
    if (before === undefined || before.join(',') === now.join(',')) return [];
    return [
      {
        layer,
        length: 1,
        schema: { added: now.filter((name) => !before.includes(name)), removed: before.filter((name) => !now.includes(name)) },
      },
    ];
  });
}

/** Filters a list here: reads it a chunk at a time and keeps the positions of the rows that pass (and of anything not a row, which fails its range when read). */
export async function keepPassing(file: ChangeFile, segment: ListSegment, filter: LayerFilter): Promise<void> {
  const kept: number[] = [];
  for (let start = 0; start < segment.length; start += FILTER_CHUNK) {
    const rows = await file.read(segment.list, start, Math.min(start + FILTER_CHUNK, segment.length));
    rows.forEach((row, index) => {
      if (!isFeature(row) || filter.test(row)) kept.push(start + index);
    });
  }
  segment.kept = kept;
  segment.length = kept.length;
}

/** The elements of a list at ascending `positions`, read in runs of at most {@link FILTER_CHUNK} elements. */
export async function readPositions(file: ChangeFile, list: number, positions: readonly number[]): Promise<unknown[]> {
  const found: unknown[] = [];
  for (let first = 0; first < positions.length;) {
    let last = first;
    while (last + 1 < positions.length && positions[last + 1]! - positions[first]! < FILTER_CHUNK) last += 1;
    const rows = await file.read(list, positions[first]!, positions[last]! + 1);
    for (let at = first; at <= last; at += 1) found.push(rows[positions[at]! - positions[first]!]);
    first = last + 1;
  }
  return found;
}
