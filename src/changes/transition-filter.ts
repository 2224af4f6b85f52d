import { InvalidWhereError } from '../arcgis/where/where-error.js';
import { compileTransitionWhere, compileWhere, type TransitionWhere, type WhereField } from '../arcgis/where/where.js';
import type { RouteFilterConfig, RouteWhen } from '../config/route-filter.js';
import type { ChangeEvent, ChangeEventType } from './change-event.js';

/** The fields of the event's layer, which the clause is compiled against (undefined: the layer is not known). */
export type FieldsOf = (event: ChangeEvent) => readonly WhereField[] | undefined;

/** A compilation per layer (by its fields): null when the clause names a field the layer lacks. */
function perLayer<T>(compile: (fields: readonly WhereField[]) => T): (fields: readonly WhereField[] | undefined) => T | null {
  const compiled = new WeakMap<readonly WhereField[], T | null>();
  return (fields) => {
    if (fields === undefined) return null;
    if (!compiled.has(fields)) {
      try {
        compiled.set(fields, compile(fields));
      } catch (err) {
        if (!(err instanceof InvalidWhereError)) throw err;
        compiled.set(fields, null);
      }
    }
    return compiled.get(fields)!;
  };
}

/** Whether `row` holds a value (null included) for every field of `names`: a tracked row lacks the untracked ones. */
const holds = (row: Record<string, unknown> | undefined, names: readonly string[]): row is Record<string, unknown> =>
  row !== undefined && names.every((name) => Object.hasOwn(row, name));

/**
 * A route's `where` as a test of a change event (docs/changes.md#transitions). A bare name reads `after`, or `before`
 * for a delete; `before.x` reads the row before the change (nulls for a create), `after.x` the row after it (nulls
 * for a delete). A clause that reads a previous value geohook does not have (the previous row unknown, or the field
 * not tracked) takes no event: it is never guessed. A layer without a field the clause names takes none either.
 */
export function whereTest(clause: string): (event: ChangeEvent, fields: readonly WhereField[] | undefined) => boolean {
  const compiledFor = perLayer((fields) => compileTransitionWhere(clause, fields));
  return (event, fields) => {
    const compiled = compiledFor(fields);
    if (compiled === null) return false;
    const after = event.after?.attributes;
    const before = event.op === 'c' ? undefined : event.before?.attributes;
    const row = event.op === 'd' ? before : after;
    if (!readable(compiled, event, row, before)) return false;
    return compiled.test({ row, before, after });
  };
}

/** Whether the previous values the clause reads are known: a create's are nulls, an update's or delete's must be kept. */
function readable(
  compiled: TransitionWhere,
  event: ChangeEvent,
  row: Record<string, unknown> | undefined,
  before: Record<string, unknown> | undefined,
): boolean {
  if (compiled.reads.row.length > 0 && !(event.op === 'd' ? holds(row, compiled.reads.row) : row !== undefined)) return false;
  return event.op === 'c' || compiled.reads.before.length === 0 || holds(before, compiled.reads.before);
}

/** `when: {field, from?, to?}`: an update whose tracked `field` changed, from `from` and to `to` when given. */
export function whenTest(when: RouteWhen): (event: ChangeEvent, fields: readonly WhereField[] | undefined) => boolean {
  const wanted = when.field.toLowerCase();
  const equal = (value: unknown, expected: string | number | null): boolean =>
    expected === null ? value === null || value === undefined : String(value) === String(expected) && value !== null;
  return (event, fields) => {
    if (event.op !== 'u' || event.changedFields === undefined) return false;
    const name = fields?.find((field) => field.name.toLowerCase() === wanted)?.name ?? when.field;
    if (!event.changedFields.includes(name)) return false;
    const before = event.before?.attributes;
    if (when.from !== undefined && !(holds(before, [name]) && equal(before[name], when.from))) return false;
    return when.to === undefined || equal(event.after?.attributes[name], when.to);
  };
}

/** Which way a change takes a feature across a filter: into it, out of it, or neither (undefined). */
export type Crossing = 'entered' | 'left';

/**
 * Whether the change crosses the `where` of a route with `emit` (docs/changes.md#transitions): a create whose row
 * is in the filter enters it; an update enters when its previous row was out and its row is in, and leaves the other
 * way; a delete of a feature that was in leaves it. An update or delete whose previous values for the clause's
 * fields geohook does not have (unknown, or not tracked) crosses nothing; a snapshot's read crosses nothing.
 */
export function crossingTest(clause: string): (event: ChangeEvent, fields: readonly WhereField[] | undefined) => Crossing | undefined {
  const compiledFor = perLayer((fields) => {
    const test = compileWhere(clause, fields);
    const names = compileTransitionWhere(clause, fields).reads.row;
    return { test, names };
  });
  return (event, fields) => {
    const compiled = compiledFor(fields);
    if (compiled === null || event.op === undefined || event.op === 'r') return undefined;
    const after = event.after?.attributes;
    const isIn = event.op !== 'd' && after !== undefined && compiled.test(after);
    if (event.op === 'c') return isIn ? 'entered' : undefined;
    const before = event.before?.attributes;
    if (!holds(before, compiled.names)) return undefined;
    const wasIn = compiled.test(before);
    return wasIn === isIn ? undefined : isIn ? 'entered' : 'left';
  };
}

/** What a change-event filter reads of the change itself: `where`, `changed`, `when` and `emit` of a route, subscription or `changes` service. */
export type ChangeFilterConfig = Pick<RouteFilterConfig, 'where' | 'changed' | 'when' | 'emit'>;

/**
 * A change-event filter (docs/changes.md#transitions) as a test: false when it takes the change, else the type it
 * takes it as: `change.entered` or `change.left` for a crossing of its `where` that its `emit` asks for, the
 * change's own type otherwise (it passes `changed`, `when` and `where`). `fields`: the event's layer's.
 */
export function changeTest(
  filter: ChangeFilterConfig,
): (event: ChangeEvent, fields: readonly WhereField[] | undefined) => ChangeEventType | false {
  const where = filter.where === undefined ? undefined : whereTest(filter.where);
  const crossing = filter.emit === undefined || filter.where === undefined ? undefined : crossingTest(filter.where);
  const emits = (kind: Crossing): boolean => filter.emit === 'both' || filter.emit === kind;
  const when = filter.when === undefined ? undefined : whenTest(filter.when);
  const changed = filter.changed === undefined ? undefined : new Set(filter.changed.map((name) => name.toLowerCase()));
  return (event, fields) => {
    if (changed !== undefined && !(event.op === 'u' && (event.changedFields ?? []).some((field) => changed.has(field.toLowerCase()))))
      return false;
    if (when !== undefined && !when(event, fields)) return false;
    const crossed = crossing?.(event, fields);
    if (crossed !== undefined && emits(crossed)) return `change.${crossed}`;
    return (where === undefined || where(event, fields)) && event.type;
  };
}
