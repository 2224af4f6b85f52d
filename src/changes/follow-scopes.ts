import { readServerGens, type LayerGen } from '../arcgis-request/server-generations.js';
import { scopeOf } from '../events/tracked-ranges.js';
import { changesResolvedKey, changesSnapshotsKey } from '../redis/keys.js';
import type { ClaimedRange } from './range-claims.js';
import type { ResolverContext } from './resolver-context.js';
import { snapshotService } from './snapshot.js';

/** How a stale claim (claimed, but no job was added: a receiver stopped in between) is noticed. */
const STALE_CLAIM_MS = 10_000;

/** The scopes followed, and the check that claims the ranges their watermarks moved over. */
export interface ScopeFollower {
  /** One check: the scopes read again when due, the ranges their watermarks moved over claimed and queued. */
  tick(): Promise<void>;
  /** Why change events are not followed yet (a service not read once); undefined once they are. */
  notReadyReason(): string | undefined;
}

/**
 * The scopes of a service, from its layers' generations, each with the generation it starts at: the service's on
 * ArcGIS Enterprise, each followed layer's on Online.
 */
function scopesOf(context: ResolverContext, service: string, gens: readonly LayerGen[]): { scope: string; serverGen: number }[] {
  const scope = scopeOf(context.options.hook, service);
  if (!context.online) return [{ scope, serverGen: Math.max(0, ...gens.map((gen) => gen.serverGen)) }];
  const only = context.options.byService?.[service]?.layers;
  return gens
    .filter((gen) => only === undefined || only.includes(gen.id))
    .map((gen) => ({ scope: `${scope}#${gen.id}`, serverGen: gen.serverGen }));
}

/**
 * The initial snapshot of a service whose settings ask for one (docs/changes.md#a-snapshot), once: the generation
 * its ids name is recorded first, so that a snapshot cut short by a crash is taken again under the same ids.
 */
async function initialSnapshot(context: ResolverContext, service: string): Promise<void> {
  const { connection, prefix, hook } = context.options;
  const key = changesSnapshotsKey(prefix);
  const field = scopeOf(hook, service);
  if ((await connection.hget(key, field))?.startsWith('done:') === true) return;
  const settings = context.options.byService?.[service];
  context.log.info({ service }, 'initial snapshot: reading every row');
  const result = await snapshotService({
    connection,
    prefix,
    hook,
    service,
    serviceUrl: new URL(context.urlOf(service)),
    session: context.sessionOf(context.rangeTimeoutMs),
    track: settings?.track ?? context.options.track,
    writer: context.writer(),
    previous: context.previous,
    online: context.online,
    ...(context.orgId === undefined ? {} : { orgId: context.orgId }),
    ...(settings === undefined ? {} : { filters: settings }),
    pinGeneration: async (serverGen) => {
      await connection.hsetnx(key, field, String(serverGen));
      return Number(await connection.hget(key, field));
    },
  });
  await connection.hset(key, field, `done:${result.serverGen}`);
  context.log.info({ service, events: result.events, added: result.added, serverGen: result.serverGen }, 'initial snapshot written');
}

/**
 * Follows the scopes of the CHANGES services: each check claims, one at a time per scope, the ranges their
 * watermarks moved over, and hands each to `enqueue`; every 100th also hands over the claims gone stale.
 */
export function followScopes(context: ResolverContext, enqueue: (range: ClaimedRange) => Promise<void>): ScopeFollower {
  const { connection, prefix, hook, services } = context.options;
  const { log, claims } = context;
  let scopes: string[] = [];
  const unread = new Set(services);

  /**
   * The scopes followed, read from the services' `changeTrackingInfo`; a scope followed for the first time starts
   * at its server's generation, so every edit made from then on is resolved, whenever its delivery comes. A service
   * that cannot be read now is tried again later.
   */
  async function refreshScopes(): Promise<void> {
    const found: string[] = [];
    for (const service of services) {
      const scope = scopeOf(hook, service);
      try {
        const gens = await readServerGens(context.sessionOf(), new URL(context.urlOf(service)));
        if (gens.length === 0) {
          unread.delete(service);
          log.warn({ service }, 'change events: the service has no change tracking: not followed');
          continue;
        }
        for (const entry of scopesOf(context, service, gens)) {
          await connection.hsetnx(changesResolvedKey(prefix), entry.scope, String(entry.serverGen));
          found.push(entry.scope);
        }
        if (context.options.byService?.[service]?.snapshot === 'initial') await initialSnapshot(context, service);
        unread.delete(service);
      } catch (err) {
        log.warn({ err, service }, 'change events: the service could not be read: trying again');
        found.push(...scopes.filter((known) => known === scope || known.startsWith(`${scope}#`)));
      }
    }
    scopes = found;
  }

  let ticks = 0;
  return {
    async tick() {
      ticks += 1;
      // The scopes are read again every half minute (a layer added), and until every service could be read.
      if (ticks % 300 === 1 || (unread.size > 0 && ticks % 20 === 1)) await refreshScopes();
      for (const range of await claims.claim(scopes)) await enqueue(range);
      if (ticks % 100 === 0) for (const range of await claims.stale(STALE_CLAIM_MS)) await enqueue(range);
    },
    notReadyReason: () => (unread.size === 0 ? undefined : `change events: ${[...unread][0]} not read yet`),
  };
}
