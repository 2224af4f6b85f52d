import { z } from 'zod';
import { filterIssues, routeFilterFields, type RouteFilterConfig } from './route-filter.js';

/** A subscription's name: also its queue's (`sub-<name>`). */
export const SUBSCRIPTION_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** What a subscription keeps waiting for a reader before it drops its oldest events (and counts them). */
export interface BacklogLimits {
  /** Most events waiting. @defaultValue 100000 */
  readonly count: number;
  /** Longest an event waits, seconds. @defaultValue 604800 (7 days) */
  readonly ageSeconds: number;
}

export const DEFAULT_BACKLOG: BacklogLimits = { count: 100_000, ageSeconds: 7 * 86_400 };

/** A subscription as GEOHOOK_CONFIG or `geohook subscriptions create` declares it (docs/subscriptions.md). */
export interface SubscriptionConfig extends RouteFilterConfig {
  /** `[a-z0-9][a-z0-9-]{0,62}`: its queue is `sub-<name>`. */
  readonly name: string;
  /** Past these, its oldest waiting events are dropped and counted; the defaults of `subscriptionBacklog` otherwise. */
  readonly backlog?: { readonly count?: number | undefined; readonly ageSeconds?: number | undefined } | undefined;
}

export const backlogSchema = z
  .object({
    count: z.number().int().min(1, 'at least 1 event').max(100_000_000).optional(),
    ageSeconds: z
      .number()
      .int()
      .min(1, 'at least 1 second')
      .max(365 * 86_400)
      .optional(),
  })
  .strict();

/** One subscription's schema, made from the file schema's own `where` (so it is read as a relay route's is). */
export function subscriptionSchema(where: z.ZodType<string>): z.ZodType<SubscriptionConfig> {
  return z
    .object({
      name: z.string().regex(SUBSCRIPTION_NAME, 'lower-case letters, digits and "-", starting with a letter or digit, at most 63'),
      ...routeFilterFields(where),
      backlog: backlogSchema.optional(),
    })
    .strict()
    .superRefine((entry, context) => {
      for (const { message, path } of filterIssues(entry)) context.addIssue({ code: 'custom', message, path: [path] });
    });
}

/** The `subscriptions` of GEOHOOK_CONFIG: no two of one name. */
export function subscriptionsSchema(where: z.ZodType<string>): z.ZodType<SubscriptionConfig[]> {
  return z.array(subscriptionSchema(where)).superRefine((entries, context) => {
    const names = new Set<string>();
    entries.forEach(({ name }, index) => {
      if (names.has(name))
        context.addIssue({ code: 'custom', message: `subscription "${name}": a second of this name`, path: [index, 'name'] });
      names.add(name);
    });
  });
}
