import { z } from 'zod';
import { serviceName } from './org-schema.js';

/** An event type pattern a relay route or a subscription takes (`*` any run of characters): change, feature and GP events. */
export const typePattern = z
  .string()
  .regex(/^(change|feature|gp)\.[A-Za-z0-9_.*]{1,120}$/, 'patterns of change., feature. or gp. events (e.g. "change.*", "gp.*")');

/** Which events a relay route or a subscription takes (docs/relays.md#routes): the filters they share. */
export interface RouteFilterConfig {
  /** Event type patterns: `change.*`, `change.updated`, `feature.*`, `gp.*`… */
  readonly types: readonly string[];
  /** Only events of these services (`folder/name.Type`); every service when absent. */
  readonly services?: readonly string[] | undefined;
  /** Only change events of these layers (ids); every layer when absent. */
  readonly layers?: readonly number[] | undefined;
  /** Only change events whose row matches: `after`, or `before` for deletes. */
  readonly where?: string | undefined;
  /** Only updates whose changed fields include one of these. */
  readonly changed?: readonly string[] | undefined;
}

/** The schema fields of {@link RouteFilterConfig}, with the file schema's own `where` (so that every clause is read alike). */
export const routeFilterFields = (where: z.ZodType<string>) => ({
  types: z.array(typePattern).min(1, 'at least one event type pattern'),
  services: z.array(serviceName).min(1).optional(),
  layers: z.array(z.number().int().min(0)).min(1).optional(),
  where: where.optional(),
  changed: z.array(z.string().min(1)).min(1).optional(),
});

/** The check a filter needs beyond its fields' own: its layer ids name layers of its services. */
export function layersNeedServices(filter: RouteFilterConfig): string | undefined {
  return filter.layers !== undefined && filter.services === undefined ? 'layers need services: layer ids are per service' : undefined;
}
