import type { Logger } from 'pino';
import type { ResolvedAdminAuth } from '../arcgis/admin-auth.js';
import { onlineOrgIdOf } from '../arcgis/online-admin.js';
import type { ServiceLocator } from '../arcgis/service-locator.js';
import { createServiceSession, type ServiceSession } from '../arcgis-request/service-session.js';
import { PreviousValuesStore } from '../changes/previous-values.js';
import { GeohookError, messageOf } from '../errors.js';
import type { RedisClient } from '../redis/connection.js';
import { mirrorErrorsKey, watermarksKey } from '../redis/keys.js';
import { FailureStreak } from '../retry/failure-streak.js';
import { startPollLoop } from '../retry/poll-loop.js';
import { databaseUnavailable } from './database-unavailable.js';
import { layersBeforeHistory } from './history-restart.js';
import { createMirrorPool, prepareMirrorDatabase } from './mirror-database.js';
import type { MirrorMetrics } from './mirror-metrics.js';
import { mirrorScopesOf, type FollowedScope } from './mirror-scopes.js';
import { rebuildScope } from './rebuild-scope.js';
import { createRowEncoder } from './row-encoder.js';
import { syncScope, type LayerSync } from './sync-scope.js';

/** Options of {@link startMirror}. */
export interface MirrorOptions {
  /** Where the watermarks are; the caller closes it. */
  connection: RedisClient;
  prefix: string;
  /** The hook the services deliver to, and where their REST resources are (ADMIN_URL). */
  hook: string;
  adminUrl: string;
  /** MIRROR: `folder/name.FeatureServer`. */
  services: readonly string[];
  /** MIRROR_DATABASE_URL. */
  databaseUrl: string;
  /** MIRROR_SCHEMA. */
  schema: string;
  auth?: ResolvedAdminAuth;
  serviceLocator: ServiceLocator;
  logger: Logger;
  /** How often the watermarks are compared with the tables' generations. @defaultValue 100 */
  intervalMs?: number;
  /** How often the services' layers are read again (a layer added gets its table). @defaultValue 30000 */
  layersIntervalMs?: number;
  /** The longest sync of one scope (an initial copy included). @defaultValue 1800000 */
  timeoutMs?: number;
  /** @defaultValue globalThis.fetch */
  fetch?: typeof fetch;
  /** Where its metrics go (the receiver's `/metrics`). @defaultValue none are kept */
  metrics?: MirrorMetrics;
  /**
   * The services whose layers get an attachments table (those with `attachments` on in `changes`), and whether the
   * tables keep the bytes (MIRROR_ATTACHMENT_BYTES). @defaultValue none
   */
  attachments?: { services: readonly string[]; keepBytes: boolean };
}

/** A running mirror. */
export interface Mirror {
  close(): Promise<void>;
}

/** How a sync's failure is recorded for its layers: `<code>: <message>` for a coded error, else the message. */
const errorText = (err: unknown): string => (err instanceof GeohookError ? `${err.code}: ${err.message}` : messageOf(err));

/** How soon a service that could not be read is read again. */
const UNREAD_RETRY_MS = 2000;

/**
 * The PostGIS mirror (docs/mirror.md): each scope of the MIRROR services follows its watermark, the generation
 * deliveries, backfills and polls brought it to; a table behind it gets the changes in between, read with the
 * change resolver's range reader, in one transaction with the generation written to `mirror_state`. Exactly once
 * by construction: after any crash each table is its layer at the generation `mirror_state` says, and the next
 * sync goes on from there. Safe with any number of geohook processes (an advisory lock per scope).
 */
export function startMirror(options: MirrorOptions): Mirror {
  const { connection, prefix, hook, schema, logger } = options;
  const log = logger.child({ component: 'mirror' });
  // A connection lost while idle (PostgreSQL restarted) is said by the next check that cannot connect, if any.
  const pool = createMirrorPool(options.databaseUrl, (err) => log.debug({ err }, 'mirror database connection lost'));
  const unavailable = (err: unknown): string | undefined => databaseUnavailable(err, options.databaseUrl);
  const previous = new PreviousValuesStore(connection);
  // Change batches are encoded off the thread that answers deliveries (the initial copy has its page encoder).
  const rowEncoder = createRowEncoder(log);
  const orgId = onlineOrgIdOf(options.adminUrl);
  const sessionOf = (): ServiceSession =>
    createServiceSession({
      trusted: options.serviceLocator.trusted(hook),
      ...(options.auth === undefined ? {} : { auth: options.auth }),
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
      deadlineMs: options.timeoutMs ?? 1_800_000,
      pollIntervalMs: 50,
      maxPollIntervalMs: 5000,
    });

  let prepared = false;
  let followed: FollowedScope[] = [];
  /** When the services' layers are to be read again. */
  let layersReadAt = 0;

  /**
   * The scopes of the services and their layers, as the services describe them now; a service not readable now keeps
   * what was known. Resolves to whether every service was read.
   */
  async function readScopes(): Promise<boolean> {
    const found: FollowedScope[] = [];
    let unread = 0;
    for (const service of options.services) {
      try {
        found.push(...(await mirrorScopesOf(sessionOf(), options.adminUrl, hook, service)));
      } catch (err) {
        log.warn({ err, service }, 'mirror: the service could not be read: trying again');
        found.push(...followed.filter((known) => known.service === service));
        unread += 1;
      }
    }
    followed = found;
    return unread === 0;
  }

  const errorField = (scope: FollowedScope, layer: number): string => `${scope.service}#${layer}`;

  /**
   * Scopes whose last sync refused a geometry past the limits, with the watermark it was at. Trying again gives the
   * same answer: such a scope waits for its watermark to move (an edit that may shrink or delete the feature).
   */
  const refused = new Map<string, string | null>();

  /**
   * Scopes whose last sync failed otherwise (the GIS server's answer, a table changed by hand…): each is tried again
   * after a backoff of 1 s doubling up to 60 s, its cause said once (see {@link FailureStreak}), not every check.
   */
  const failing = new Map<string, { streak: FailureStreak; retryAt: number }>();

  function failed(scope: FollowedScope, err: unknown): void {
    const entry = failing.get(scope.scope) ?? {
      streak: new FailureStreak({
        logger: log.child({ service: scope.service }),
        subject: `mirror of ${scope.service}`,
        failingMessage: 'mirror: the layers could not be brought up to date: trying again',
        recoveredMessage: 'mirror: the layers are brought up to date again',
      }),
      retryAt: 0,
    };
    entry.retryAt = Date.now() + entry.streak.failed(errorText(err), { err });
    failing.set(scope.scope, entry);
  }

  async function sync(scope: FollowedScope): Promise<void> {
    if (Date.now() < (failing.get(scope.scope)?.retryAt ?? 0)) return;
    const mark = await connection.hget(watermarksKey(prefix), scope.scope);
    if (refused.has(scope.scope) && refused.get(scope.scope) === mark) return;
    refused.delete(scope.scope);
    const context = {
      pool,
      schema,
      hook,
      prefix,
      session: sessionOf(),
      previous,
      encodeRows: rowEncoder.encode,
      ...(orgId === undefined ? {} : { orgId }),
      ...(options.attachments?.services.includes(scope.service) === true
        ? { attachments: { keepBytes: options.attachments.keepBytes } }
        : {}),
    };
    let synced: LayerSync[];
    try {
      const restarted = await layersBeforeHistory(context, scope, scope.layerIds);
      if (restarted.length > 0) {
        log.warn(
          { service: scope.service, layers: restarted },
          "the server's history starts after the tables' generation (it restarted, or forgot its changes): the layers are copied again",
        );
        await rebuildScope(context, scope, restarted);
      }
      synced = await syncScope(context, scope, scope.layerIds, mark === null ? undefined : Number(mark));
    } catch (err) {
      const refusal = err instanceof GeohookError && err.code === 'GEOHOOK_ERR_MIRROR_GEOMETRY_LIMIT';
      if (refusal) refused.set(scope.scope, mark);
      options.metrics?.failed(scope.service);
      // A coded error (a geometry past the limits: GEOHOOK_ERR_MIRROR_GEOMETRY_LIMIT) is recorded with its code.
      const reason = unavailable(err);
      const error = JSON.stringify({ error: reason ?? errorText(err), at: new Date().toISOString() });
      await connection.hset(mirrorErrorsKey(prefix), Object.fromEntries(scope.layerIds.map((layer) => [errorField(scope, layer), error])));
      // PostgreSQL that cannot be used fails the whole check: said once, tried again with backoff.
      if (reason !== undefined) throw err;
      if (refusal) log.warn({ err, service: scope.service }, 'mirror: a geometry was refused: the layers wait for the next edit');
      else failed(scope, err);
      return;
    }
    failing.get(scope.scope)?.streak.succeeded();
    failing.delete(scope.scope);
    if (synced.length === 0) return;
    options.metrics?.synced(scope.service, synced);
    await connection.hdel(mirrorErrorsKey(prefix), ...synced.map(({ layer }) => errorField(scope, layer)));
    for (const line of synced) {
      if (line.plainNameTaken !== undefined)
        log.warn({ service: scope.service, ...line }, "mirror: the layer's plain table name is taken: its table has another");
      log.info(
        { service: scope.service, ...line },
        line.copied === undefined ? 'mirror: table brought up to date' : 'mirror: table copied',
      );
    }
  }

  const tick = async (): Promise<void> => {
    if (!prepared) {
      for (const { service, layer, table } of await prepareMirrorDatabase(pool, schema)) {
        log.warn({ service, layer, table }, 'mirror: the layer shared its table with another: it is copied into a table of its own');
      }
      prepared = true;
      log.info({ schema, services: options.services }, 'mirroring the services');
    }
    if (Date.now() >= layersReadAt) {
      // A service that could not be read is read again in a few seconds.
      layersReadAt = Date.now() + ((await readScopes()) ? (options.layersIntervalMs ?? 30_000) : UNREAD_RETRY_MS);
    }
    for (const scope of followed) await sync(scope);
  };

  // A check that fails is said once per cause (PostgreSQL unreachable: where, MIRROR_DATABASE_URL and the fix), and
  // the next waits a backoff of 1 s doubling up to 60 s; an uncoded error is logged whole the first time.
  const failures = new FailureStreak({
    logger: log,
    subject: 'checks',
    failingMessage: 'not mirroring: retrying',
    recoveredMessage: 'PostgreSQL reachable again',
  });
  const loop = startPollLoop({
    check: tick,
    intervalMs: options.intervalMs ?? 100,
    succeeded: () => failures.succeeded(),
    failed: (err) => {
      log.debug({ err }, 'mirror check failed');
      const reason = unavailable(err);
      const whole = reason === undefined && !(err instanceof GeohookError);
      return failures.failed(reason ?? errorText(err), whole ? { err } : {});
    },
  });

  return {
    async close() {
      await loop.close();
      await rowEncoder.close();
      await pool.end();
    },
  };
}
