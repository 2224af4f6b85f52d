import type { ChangeEvent } from '../changes/change-event.js';

const letters = { c: 'C', u: 'U', d: 'D', r: 'R' } as const;

const shown = (value: unknown): string => (typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null'));

/**
 * A change event as a person reads it: `U Parcels/0 {4F95…} status: Open → Closed (+geometry)`: the operation, the
 * service and layer, the feature (its GlobalID's first characters, else `#<object id>`), and what changed, when
 * the previous values are known.
 */
export function changeLine(event: ChangeEvent): string {
  const letter = event.op === undefined ? 'S' : letters[event.op];
  const { globalId, objectId } = event.key;
  const feature = globalId !== undefined ? `${globalId.slice(0, 5)}…}` : `#${String(objectId)}`;
  const changes = (event.changedFields ?? []).map(
    (name) => `${name}: ${shown(event.before?.attributes[name])} → ${shown(event.after?.attributes[name])}`,
  );
  if (event.geometryChanged === true) changes.push('(+geometry)');
  return [`${letter} ${event.service.serviceName}/${event.layer.id} ${feature}`, changes.join(', ')]
    .filter((part) => part !== '')
    .join(' ');
}
