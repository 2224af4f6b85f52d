import { z } from 'zod';
import { parseWhere, type Condition } from '../arcgis/where/where-parser.js';
import { compileWildcards } from '../arcgis/wildcards.js';
import { serviceName } from './org-schema.js';

/** An event type pattern a relay route or a subscription takes (`*` any run of characters): change, feature and GP events. */
export const typePattern = z
  .string()
  .regex(/^(change|feature|gp)\.[A-Za-z0-9_.*]{1,120}$/, 'patterns of change., feature. or gp. events (e.g. "change.*", "gp.*")');

/** A value of `when`'s `from` or `to`: text, a number, or null (no value). */
export type WhenValue = string | number | null;

/** `when`: an update whose `field` changed, from `from` and to `to` when given (docs/changes.md#transitions). */
export interface RouteWhen {
  readonly field: string;
  readonly from?: WhenValue | undefined;
  readonly to?: WhenValue | undefined;
}

/** Which crossings of its `where` a route adds as `change.entered` and `change.left` events. */
export const emitKinds = ['entered', 'left', 'both'] as const;
export type RouteEmit = (typeof emitKinds)[number];

/** Which events a relay route or a subscription takes (docs/relays.md#routes): the filters they share. */
export interface RouteFilterConfig {
  /** Event type patterns: `change.*`, `change.updated`, `feature.*`, `gp.*`… */
  readonly types: readonly string[];
  /** Only events of these services (`folder/name.Type`); every service when absent. */
  readonly services?: readonly string[] | undefined;
  /** Only change events of these layers (ids); every layer when absent. */
  readonly layers?: readonly number[] | undefined;
  /** Only change events whose row matches: `after`, or `before` for deletes; `before.x` and `after.x` read either. */
  readonly where?: string | undefined;
  /** Only updates whose changed fields include one of these (case-insensitive, as ArcGIS reads names). */
  readonly changed?: readonly string[] | undefined;
  /** Only updates of this field, from and to these values. */
  readonly when?: RouteWhen | undefined;
  /** Adds `change.entered` (into `where`), `change.left` (out of it), or both. */
  readonly emit?: RouteEmit | undefined;
}

const whenValue = z.union([z.string(), z.number().finite(), z.null()], { error: 'text, a number or null' });

/** The schema fields of {@link RouteFilterConfig}, with the file schema's own `where` (so that every clause is read alike). */
export const routeFilterFields = (where: z.ZodType<string>) => ({
  types: z.array(typePattern).min(1, 'at least one event type pattern'),
  services: z.array(serviceName).min(1).optional(),
  layers: z.array(z.number().int().min(0)).min(1).optional(),
  where: where.optional(),
  changed: z.array(z.string().min(1)).min(1).optional(),
  when: z
    .object({ field: z.string().min(1), from: whenValue.optional(), to: whenValue.optional() })
    .strict()
    .optional(),
  emit: z.enum(emitKinds, { error: emitKinds.join(', ') }).optional(),
});

/** Whether a parsed clause names `before.x` or `after.x`. */
function qualifies(condition: Condition): boolean {
  switch (condition.type) {
    case 'and':
    case 'or':
      return condition.items.some(qualifies);
    case 'not':
      return qualifies(condition.item);
    case 'compare':
      return [condition.left, condition.right].some((operand) => operand.type === 'field' && operand.row !== undefined);
    case 'in':
    case 'like':
    case 'isNull':
      return condition.operand.type === 'field' && condition.operand.row !== undefined;
  }
}

/** Whether the clause names `before.x` or `after.x` (false for a clause that does not parse: its own check says why). */
export function isTransitionClause(where: string): boolean {
  try {
    return qualifies(parseWhere(where));
  } catch {
    return false;
  }
}

/** The event types a route with `emit` adds. */
export const emittedTypes = (emit: RouteEmit): string[] => (emit === 'both' ? ['change.entered', 'change.left'] : [`change.${emit}`]);

/** The checks a filter needs beyond its fields' own, each with the field it is about: what it says could never match. */
export function filterIssues(filter: RouteFilterConfig): { message: string; path: string }[] {
  const issues: { message: string; path: string }[] = [];
  const patterns = filter.types.map((pattern) => compileWildcards(pattern, { many: '*', one: '\0' }));
  const takes = (type: string): boolean => patterns.some((matches) => matches(type));
  if (filter.layers !== undefined && filter.services === undefined)
    issues.push({ message: 'layers need services: layer ids are per service', path: 'layers' });
  if (filter.emit !== undefined) {
    if (filter.where === undefined)
      issues.push({ message: 'emit needs a where: it says when a feature enters or leaves that filter', path: 'emit' });
    else if (isTransitionClause(filter.where))
      issues.push({ message: 'emit needs a where of bare names: a feature is in it or not, before and after alike', path: 'emit' });
    const emitted = emittedTypes(filter.emit);
    if (!emitted.some(takes))
      issues.push({
        message: `emit "${filter.emit}" adds ${emitted.join(' and ')}, which no pattern of types takes: add "change.*" or "${emitted[0]}"`,
        path: 'emit',
      });
  }
  if (filter.when !== undefined && !['change.updated', 'change.entered', 'change.left'].some(takes))
    issues.push({ message: 'when takes updates only, which no pattern of types takes: add "change.updated"', path: 'when' });
  return issues;
}

/**
 * The checks of a `changes` service's transition filter (docs/changes.md#transitions): those of a route taking
 * `change.*`, for its clause, or each of its clauses by layer.
 */
export function changesFilterIssues(settings: {
  where?: string | Readonly<Record<string, string>> | undefined;
  when?: RouteWhen | undefined;
  emit?: RouteEmit | undefined;
}): { message: string; path: string }[] {
  const { where, when, emit } = settings;
  const clauses = where === undefined ? [undefined] : typeof where === 'string' ? [where] : Object.values(where);
  const issues = clauses.flatMap((clause) =>
    filterIssues({ types: ['change.*'], ...(clause === undefined ? {} : { where: clause }), when, emit }),
  );
  return issues.filter((issue, index) => issues.findIndex((other) => other.message === issue.message) === index);
}
