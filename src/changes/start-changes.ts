import { createHash } from 'node:crypto';
import { Queue, UnrecoverableError, Worker, type Job, type JobsOptions } from 'bullmq';
import type { Logger } from 'pino';
import type { ResolvedAdminAuth } from '../arcgis/admin-auth.js';
import { isOnlineAdminRoot, onlineOrgIdOf } from '../arcgis/online-admin.js';
import { serviceRestUrl } from '../arcgis/rest-urls.js';
import type { ServiceLocator } from '../arcgis/service-locator.js';
import { createServiceSession, type ServiceSession } from '../arcgis-request/service-session.js';
import { readServerGens } from '../arcgis-request/server-generations.js';
import type { ChangesServiceSettings } from '../config/types.js';
import { AdminApiError, AdminAuthError } from '../errors.js';
import { parseScope, scopeOf } from '../events/tracked-ranges.js';
import type { AlertSender } from '../health/alert-sender.js';
import {
  BACKFILL_LOCK_MS,
  BACKFILL_MAX_STALLED_COUNT,
  BACKFILL_STALLED_CHECK_MS,
  backfillBackoff,
  backfillJobOptions,
} from '../queue/backfill-jobs.js';
import { backfillQueueName } from '../queue/names.js';
import type { RedisClient } from '../redis/connection.js';
import { changesResolvedKey, changesSchemasKey, changesSnapshotsKey } from '../redis/keys.js';
import type { TrackedFields } from './build-change-events.js';
import { changeEventsQueueName, type ChangeSource } from './change-event.js';
import { changesQueueName } from './change-queues.js';
import { CHANGE_BATCH, ChangeWriter } from './change-writer.js';
import { clearFailedRange, recordFailedRange } from './failed-ranges.js';
import { PreviousValuesStore } from './previous-values.js';
import { RangeClaims, type ClaimedRange, type ScopeRange } from './range-claims.js';
import { openRange } from './resolve-range.js';
import { snapshotService } from './snapshot.js';

/** A resolve job's data: a scope's range, and how many of its change events are written already. */
export interface ResolveJobData {
  hook: string;
  scope: string;
  serviceUrl: string;
  from: number;
  to: number;
  /** Events of the range already written: a retry goes on after them. */
  written?: number;
  /**
   * How the range reached geohook, recorded when it was claimed; `replay` when `geohook changes replay` asked for it
   * again. Absent on a job queued before origins were recorded: `webhook`.
   */
  origin?: ChangeSource['origin'];
}

/** The job that resolves `range` again (`geohook changes replay`): its events keep their ids. */
export function replayJob(range: ScopeRange & { hook: string; serviceUrl: string }): {
  name: string;
  data: ResolveJobData;
  opts: JobsOptions & { jobId: string };
} {
  const { scope, from, to, hook, serviceUrl } = range;
  const jobId = `replay-${jobIdOf(range).slice('resolve-'.length)}-${Date.now().toString(36)}`;
  return { name: 'resolve', data: { hook, scope, serviceUrl, from, to, origin: 'replay' }, opts: { ...backfillJobOptions, jobId } };
}

/** Options of {@link startChanges}. */
export interface ChangesOptions {
  /** Blocking reads: a connection of its own (`maxRetriesPerRequest: null`); the caller closes it. */
  connection: RedisClient;
  prefix: string;
  /** The hook the services deliver to, and where their REST resources are (ADMIN_URL). */
  hook: string;
  adminUrl: string;
  /** CHANGES: `folder/name.FeatureServer`. */
  services: readonly string[];
  track: TrackedFields;
  /** Per service (the `changes` section of GEOHOOK_CONFIG): its tracked fields and the layers followed. */
  byService?: Readonly<Record<string, ChangesServiceSettings>>;
  auth?: ResolvedAdminAuth;
  serviceLocator: ServiceLocator;
  /** How long a change event's id is remembered (the dedup window of events), ms. */
  dedupMs: number;
  /** Options of the change-events jobs (attempts, backoff, completed kept): the events queues'. */
  jobOptions: Queue['defaultJobOptions'];
  logger: Logger;
  /** How often scopes are checked for a watermark that moved. @defaultValue 100 */
  intervalMs?: number;
  /** Ranges resolved at once, each of another scope. @defaultValue 8 */
  concurrency?: number;
  /** The longest resolution of one range. @defaultValue 1800000 */
  timeoutMs?: number;
  /** @defaultValue globalThis.fetch */
  fetch?: typeof fetch;
  /** Sends the `change.unresolvable` alert of a range that failed for good (ALERT_URL). */
  alert?: AlertSender;
}

/** A running resolver. */
export interface Changes {
  /** Why change events are not followed yet (a service not read once), for `/readyz`; undefined once they are. */
  notReadyReason(): string | undefined;
  close(): Promise<void>;
}

/** The server's answers to a range it will not give: bad request, forbidden, not found. */
const CLIENT_ERROR = /^40[034]$/;

/** How a stale claim (claimed, but no job was added: a receiver stopped in between) is noticed. */
const STALE_CLAIM_MS = 10_000;

const jobIdOf = ({ scope, from, to }: ScopeRange): string =>
  `resolve-${createHash('sha1').update(`${scope}\n${from}\n${to}`).digest('hex')}`;

/**
 * Change events (docs/changes.md): each scope of the CHANGES services follows its watermark; a range it moved over
 * is claimed (one at a time per scope) and resolved on the `change-ranges` queue, off the acknowledgement path, into one
 * change event per changed feature on `change-events`. Safe with any number of receivers.
 */
export function startChanges(options: ChangesOptions): Changes {
  const { connection, prefix, hook, logger } = options;
  const log = logger.child({ component: 'changes' });
  const claims = new RangeClaims(connection, prefix);
  const previous = new PreviousValuesStore(connection);
  const queue = new Queue<ResolveJobData>(changesQueueName, { connection, prefix, defaultJobOptions: backfillJobOptions });
  const events = new Queue(changeEventsQueueName, { connection, prefix, defaultJobOptions: options.jobOptions });
  const backfill = new Queue(backfillQueueName, { connection, prefix });
  // Redis going away is reported by the worker and retried; the queues' own reports would be printed raw.
  for (const emitter of [queue, events, backfill]) emitter.on('error', () => undefined);
  let writer: ChangeWriter | undefined;
  /** The change writer, made at first use (its script needs the queues' options). */
  const writerOf = (): ChangeWriter =>
    (writer ??= new ChangeWriter(connection, {
      queue: events,
      backfillQueue: backfill,
      prefix,
      dedupMs: options.dedupMs,
    }));
  const online = isOnlineAdminRoot(options.adminUrl);
  const orgId = onlineOrgIdOf(options.adminUrl);
  const urlOf = (service: string): string => serviceRestUrl(options.adminUrl, service).href;

  const sessionOf = (deadlineMs = 60_000): ServiceSession =>
    createServiceSession({
      trusted: options.serviceLocator.trusted(hook),
      ...(options.auth === undefined ? {} : { auth: options.auth }),
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
      deadlineMs,
      pollIntervalMs: 50,
      maxPollIntervalMs: 5000,
    });

  /**
   * The scopes followed (the service's on ArcGIS Enterprise, each of its layers' on Online), read from the services'
   * `changeTrackingInfo`; a scope followed for the first time starts at its server's generation, so every edit made
   * from then on is resolved, whenever its delivery comes. A service that cannot be read now is tried again later.
   */
  let scopes: string[] = [];
  const unread = new Set(options.services);
  async function refreshScopes(): Promise<void> {
    const found: string[] = [];
    for (const service of options.services) {
      const scope = scopeOf(hook, service);
      try {
        const gens = await readServerGens(sessionOf(), new URL(urlOf(service)));
        if (gens.length === 0) {
          unread.delete(service);
          log.warn({ service }, 'change events: the service has no change tracking: not followed');
          continue;
        }
        const only = options.byService?.[service]?.layers;
        const followed = online
          ? gens
              .filter((gen) => only === undefined || only.includes(gen.id))
              .map((gen) => ({ scope: `${scope}#${gen.id}`, serverGen: gen.serverGen }))
          : [{ scope, serverGen: Math.max(0, ...gens.map((gen) => gen.serverGen)) }];
        for (const entry of followed) {
          await connection.hsetnx(changesResolvedKey(prefix), entry.scope, String(entry.serverGen));
          found.push(entry.scope);
        }
        if (options.byService?.[service]?.snapshot === 'initial') await initialSnapshot(service);
        unread.delete(service);
      } catch (err) {
        log.warn({ err, service }, 'change events: the service could not be read: trying again');
        found.push(...scopes.filter((known) => known === scope || known.startsWith(`${scope}#`)));
      }
    }
    scopes = found;
  }

  /**
   * The initial snapshot of a service whose settings ask for one (docs/changes.md#a-snapshot), once: the generation
   * its ids name is recorded first, so that a snapshot cut short by a crash is taken again under the same ids.
   */
  async function initialSnapshot(service: string): Promise<void> {
    const key = changesSnapshotsKey(prefix);
    const field = scopeOf(hook, service);
    if ((await connection.hget(key, field))?.startsWith('done:') === true) return;
    const settings = options.byService?.[service];
    log.info({ service }, 'initial snapshot: reading every row');
    const result = await snapshotService({
      connection,
      prefix,
      hook,
      service,
      serviceUrl: new URL(urlOf(service)),
      session: sessionOf(options.timeoutMs ?? 1_800_000),
      track: settings?.track ?? options.track,
      writer: writerOf(),
      previous,
      online,
      ...(orgId === undefined ? {} : { orgId }),
      ...(settings === undefined ? {} : { filters: settings }),
      pinGeneration: async (serverGen) => {
        await connection.hsetnx(key, field, String(serverGen));
        return Number(await connection.hget(key, field));
      },
    });
    await connection.hset(key, field, `done:${result.serverGen}`);
    log.info({ service, events: result.events, added: result.added, serverGen: result.serverGen }, 'initial snapshot written');
  }

  async function enqueue(range: ClaimedRange): Promise<void> {
    const { service } = parseScope(range.scope);
    await queue.add(
      'resolve',
      { hook, scope: range.scope, serviceUrl: urlOf(service), from: range.from, to: range.to, origin: range.origin },
      { jobId: jobIdOf(range) },
    );
  }

  async function resolve(job: Job<ResolveJobData>): Promise<number> {
    const { scope, from, to } = job.data;
    const serviceUrl = new URL(job.data.serviceUrl);
    const session = sessionOf(options.timeoutMs ?? 1_800_000);
    const { service } = parseScope(scope);
    const settings = options.byService?.[service];
    const { origin = 'webhook' } = job.data;
    // A server that refuses the range (400, 403, 404: history no longer kept, a service gone) will not change its mind.
    const opened = await openRange(
      { hook, scope, serviceUrl, from, to },
      {
        session,
        previous,
        prefix,
        track: settings?.track ?? options.track,
        ...(settings?.layers === undefined ? {} : { layers: settings.layers }),
        ...(settings === undefined ? {} : { filters: settings }),
        origin,
        ...(orgId === undefined ? {} : { orgId }),
        knownSchemas: async (layerScopes) =>
          layerScopes.length === 0
            ? []
            : (await connection.hmget(changesSchemasKey(prefix), ...layerScopes)).map((value) =>
                value === null ? undefined : (JSON.parse(value) as string[]),
              ),
      },
    ).catch((err: unknown) => {
      const refused = err instanceof AdminApiError && !(err instanceof AdminAuthError) && CLIENT_ERROR.test(String(err.serverCode));
      throw refused ? new UnrecoverableError(err.message) : err;
    });
    let added = 0;
    let written = job.data.written ?? 0;
    const { total } = opened;
    const batchAt = (start: number) => {
      if (start >= total) return undefined;
      const batch = opened.events(start, Math.min(start + CHANGE_BATCH, total));
      // Awaited in its turn; meanwhile a failure must not go unhandled.
      batch.catch(() => undefined);
      return batch;
    };
    // Each batch is read (file, previous values) while the one before it is written: a batch's events are written
    // before its previous values, and the cursor moves after both, so that a crash resumes at the batch it stopped in.
    let next = batchAt(written);
    try {
      while (next !== undefined) {
        const batch = await next;
        const end = Math.min(written + CHANGE_BATCH, total);
        next = batchAt(end);
        added += await writerOf().write(batch.events, opened.layers);
        for (const { key, writes } of batch.writes) await previous.write(key, writes);
        written = end;
        await job.updateData({ ...job.data, written });
      }
    } finally {
      await next?.catch(() => undefined);
      await opened.close();
    }
    await clearFailedRange(connection, prefix, scope, { from, to });
    if (job.data.origin === 'replay') return added;
    // Read past the range (ids only, up to now): the scope is resolved up to there, the next range starts after it.
    if (opened.readUpTo !== undefined && opened.readUpTo > to) {
      const done = Number(await connection.hget(changesResolvedKey(prefix), scope));
      if (done < opened.readUpTo) await connection.hset(changesResolvedKey(prefix), scope, String(opened.readUpTo));
    }
    if (opened.schemas.size > 0) {
      await connection.hset(
        changesSchemasKey(prefix),
        Object.fromEntries([...opened.schemas].map(([scope, names]) => [scope, JSON.stringify(names)])),
      );
    }
    await claims.release({ scope, from, to });
    const line = { scope, serverGens: [from, to], events: total, added };
    // A range without an edit (the generation a pass read moved the watermark) is routine.
    if (total === 0) log.debug(line, 'range resolved: no change');
    else log.info(line, 'range resolved into change events');
    return added;
  }

  const worker = new Worker<ResolveJobData, number>(changesQueueName, resolve, {
    connection,
    prefix,
    concurrency: options.concurrency ?? 8,
    maxStalledCount: BACKFILL_MAX_STALLED_COUNT,
    lockDuration: BACKFILL_LOCK_MS,
    stalledInterval: BACKFILL_STALLED_CHECK_MS,
    settings: { backoffStrategy: backfillBackoff },
  });
  worker.on('failed', (job, err) => {
    if (job === undefined) return;
    const final = err instanceof UnrecoverableError || job.attemptsMade >= (job.opts.attempts ?? 1);
    log.warn(
      { err, scope: job.data.scope, serverGens: [job.data.from, job.data.to], attempt: job.attemptsMade },
      final ? 'range failed for good' : 'range resolution failed: retrying',
    );
    if (!final) return;
    const { scope, from, to } = job.data;
    void recordFailedRange(connection, prefix, scope, { from, to, error: err.message, at: new Date().toISOString() })
      .then(() => claims.release({ scope, from, to }))
      .catch(() => undefined);
    void options.alert?.({
      event: 'change.unresolvable',
      service: scope,
      serverGens: [from, to],
      error: err.message,
      text: `geohook: the change events of ${scope} in server generations (${from}, ${to}] could not be resolved; geohook changes replay resolves them again`,
    });
  });
  worker.on('error', (err) => log.error({ err }, 'change resolver error'));

  let ticks = 0;
  let closed = false;
  let running: Promise<void> | undefined;
  const tick = async (): Promise<void> => {
    ticks += 1;
    // The scopes are read again every half minute (a layer added), and until every service could be read.
    if (ticks % 300 === 1 || (unread.size > 0 && ticks % 20 === 1)) await refreshScopes();
    for (const range of await claims.claim(scopes)) await enqueue(range);
    if (ticks % 100 === 0) for (const range of await claims.stale(STALE_CLAIM_MS)) await enqueue(range);
  };
  // One check at a time: while Redis is away a check waits for it, and no others pile up behind.
  const check = (): void => {
    if (closed || running !== undefined) return;
    running = tick()
      .catch((err: unknown) => log.warn({ err }, 'change ranges not checked: retrying'))
      .finally(() => (running = undefined));
  };
  const timer = setInterval(check, options.intervalMs ?? 100);
  timer.unref();
  check();

  log.info({ services: options.services, track: options.track }, 'following the services');
  return {
    notReadyReason: () => (unread.size === 0 ? undefined : `change events: ${[...unread][0]} not read yet`),
    async close() {
      closed = true;
      clearInterval(timer);
      await running;
      await worker.close(true);
      await Promise.all([queue.close(), events.close(), backfill.close()]);
    },
  };
}
