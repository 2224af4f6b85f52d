import type { ChangeEvent } from '../changes/change-event.js';

const letters = { c: 'C', u: 'U', d: 'D', r: 'R' } as const;

const shown = (value: unknown): string => (typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null'));

/** Why an update shows no change: its previous values are unknown, or its edits undid each other. */
function noChange(event: ChangeEvent): string | undefined {
  if (event.op !== 'u' || event.geometryChanged === true) return undefined;
  if (event.changedFields === undefined)
    return '(no previous values: its fields are not tracked (CHANGES_TRACK), or geohook had not seen the feature)';
  if (event.changedFields.length === 0) return '(no tracked field changed: edits made at once are merged into their net change)';
  return undefined;
}

/**
 * A change event as a person reads it: `U Parcels/0 {4F95…} status: Open → Closed (+geometry)`: the operation, the
 * service and layer, the feature (its GlobalID's first characters, else `#<object id>`), and what changed, when
 * the previous values are known, or why nothing shows.
 */
export function changeLine(event: ChangeEvent): string {
  const letter = event.op === undefined ? 'S' : letters[event.op];
  const { globalId, objectId } = event.key;
  const feature = globalId !== undefined ? `${globalId.slice(0, 5)}…}` : `#${String(objectId)}`;
  const fields = (event.changedFields ?? []).map(
    (name) => `${name}: ${shown(event.before?.attributes[name])} → ${shown(event.after?.attributes[name])}`,
  );
  const moved = event.geometryChanged === true ? '(+geometry)' : '';
  return [`${letter} ${event.service.serviceName}/${event.layer.id} ${feature}`, fields.join(', '), moved, noChange(event) ?? '']
    .filter((part) => part !== '')
    .join(' ');
}
