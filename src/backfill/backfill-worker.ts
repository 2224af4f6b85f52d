import type { Job, Worker } from 'bullmq';
import type { Logger } from 'pino';
import type { ResolvedAdminAuth } from '../arcgis/admin-auth.js';
import type { ServiceLocator } from '../arcgis/service-locator.js';
import { parseServiceName } from '../arcgis/service-name.js';
import { readServerGens, scopeGeneration, type LayerGen } from '../arcgis-request/server-generations.js';
import { createServiceSession, untrustedUrl, type ServiceSession, type ServiceSessionOptions } from '../arcgis-request/service-session.js';
import { bullmq } from '../commonjs/bullmq.js';
import { AdminApiError, AdminAuthError, GeohookError } from '../errors.js';
import { parseScope } from '../events/tracked-ranges.js';
import type { ConfirmJobData, GapJobData } from '../queue/accept-script.js';
import { confirmJobId, confirmJobOptions } from '../queue/backfill-jobs.js';
import type { EventQueue } from '../queue/event-queue.js';
import { longJobWorkerOptions } from '../queue/long-jobs.js';
import { backfillQueueName } from '../queue/names.js';
import { logWorkerErrors } from '../queue/worker-errors.js';
import type { RedisClient } from '../redis/connection.js';
import { aheadKey } from '../redis/keys.js';
import { createWarningLimiter } from '../warning-limiter.js';
import { createAbsentScopes } from './absent-scopes.js';
import { backfillEvent } from './backfill-event.js';
import type { CatalogueGate } from './catalogue-gate.js';
import { readGapChanges } from './gap-changes.js';
import { createSharedReads } from './shared-reads.js';
import { newestWaitingRange } from './waiting-ranges.js';

/** Options of {@link startBackfill}. */
export interface BackfillOptions {
  /** A connection of its own (blocking reads, `maxRetriesPerRequest: null`); the caller closes it after the worker. */
  connection: RedisClient;
  /** BullMQ key prefix (`GEOHOOK_PREFIX`). */
  prefix: string;
  /** Where backfilled ranges are enqueued. */
  eventQueue: EventQueue;
  /** Credentials for `extractChanges` (ADMIN_URL's, their token URL resolved); none: the services are read without a token. */
  auth?: ResolvedAdminAuth;
  /** The URLs a gap may be filled at: a gap whose service is elsewhere fails for good, unsent. */
  serviceLocator: ServiceLocator;
  /**
   * Which services under ADMIN_URL's site are read (docs/backfill.md#services-geohook-reads): those geohook registers
   * or polls, and those the server's catalogue lists. @defaultValue every service under a trusted URL
   */
  catalogue?: CatalogueGate;
  logger: Logger;
  /** Gaps filled at once (BACKFILL_CONCURRENCY). @defaultValue 16 */
  concurrency?: number;
  /**
   * The longest fill of one gap, every request and every wait for an asynchronous `extractChanges` included (each
   * request still has 10 s); past it the try fails and is retried (BACKFILL_TIMEOUT_SECONDS). @defaultValue 1800000
   */
  fillTimeoutMs?: number;
  /** @defaultValue globalThis.fetch */
  fetch?: typeof fetch;
  /** Called when a gap held edits and their event was enqueued (the `gap.backfilled` alert). */
  onFilled?: (gap: { scope: string; serverGens: [number, number]; types: string[]; source: 'backfill' | 'poll' }) => void;
  /** How delivered ranges past their server's generation are confirmed (docs/backfill.md#ranges-the-server-confirms). */
  confirmation?: ConfirmationTiming;
}

/** When the server's generation is read again for ranges still ahead of it, and when they are refused. */
export interface ConfirmationTiming {
  /** Between two reads while the ranges that wait were delivered before the last read. @defaultValue 1000 */
  intervalMs?: number;
  /**
   * The least time between two reads of one service's generations: a range delivered after the last read began is
   * confirmed by a new read this soon after it, not after `intervalMs`. @defaultValue 100
   */
  spacingMs?: number;
  /** A range the server has not reached this long after it was delivered is refused: not tracked. @defaultValue 60000 */
  refuseAfterMs?: number;
  /** How long a scope whose server answered 400, 403 or 404 is not read again: its ranges are refused unread. @defaultValue 300000 */
  absentMs?: number;
  /** The least time between two warnings of one cause (a refusal, a service not there). @defaultValue 60000 */
  warningIntervalMs?: number;
}

/** The server's answer for a service that is not there, or not change-tracked: 400, 403, 404. */
const CLIENT_ERROR = /^40[034]$/;

const NOT_ON_SERVER = 'the server says the service is not there';
const NOT_IN_CATALOGUE = "the service is neither registered nor in the server's catalogue";

/** A scope's server generation as a confirmation read it (0: none), or why it was not read. */
interface GenerationRead {
  serverGen: number;
  /** Why the service was not read, or its answer not used. */
  why?: string;
  /** Its waiting ranges are refused at once: the service is not there. */
  refuse: boolean;
  /** The server's 400, 403 or 404. */
  serverCode?: number | undefined;
}

/** What a gap's job did: the change types of the event it enqueued, or none when the range held no edit. */
export interface GapOutcome {
  types: string[];
  duplicate: boolean;
}

/** How an asynchronous `extractChanges` is polled: soon at first (most complete fast), then less and less often. */
const FILL_POLLING = { pollIntervalMs: 100, maxPollIntervalMs: 5000 } as const;

/**
 * Fills the gaps the accept script finds (docs/backfill.md): for each, asks the feature service's
 * `extractChanges` for the generations in between and, when they hold edits, enqueues one feature event
 * (`source: "backfill"`) for the range. Also runs the `confirm` jobs that read a server's generation for the
 * delivered ranges waiting ahead of it. Only URLs the configuration trusts are read. A failure (the server down,
 * a token refused) is retried with backoff (1 s doubling to 60 s), never on the acknowledgement's path; a gap
 * whose server named a URL geohook does not go to fails for good (`backfill refused`). Safe with
 * any number of receivers: BullMQ hands each gap to one worker, and the event's id is the same for the same range.
 */
export function startBackfill(options: BackfillOptions): Worker<GapJobData | ConfirmJobData, GapOutcome | undefined> {
  const { eventQueue, logger } = options;
  const log = logger.child({ component: 'backfill' });
  const {
    intervalMs = 1000,
    spacingMs = 100,
    refuseAfterMs = 60_000,
    absentMs = 300_000,
    warningIntervalMs = 60_000,
  } = options.confirmation ?? {};
  const absent = createAbsentScopes(absentMs);
  const warnings = createWarningLimiter(log, warningIntervalMs);
  // However many scopes name a service URL (a key holder can invent scopes for a real one), it is read once per
  // interval for ranges delivered before the last read, and at most once per spacing for those delivered since.
  const generations = createSharedReads<LayerGen[]>({ keepMs: intervalMs, spacingMs });

  /** A session for the service at `serviceUrl`, or an error that fails the job for good when no configuration trusts it. */
  function sessionFor(
    hook: string,
    serviceUrl: URL,
    timing: Pick<ServiceSessionOptions, 'deadlineMs' | 'pollIntervalMs' | 'maxPollIntervalMs'> = {},
  ): ServiceSession {
    const trusted = options.serviceLocator.trusted(hook);
    // Written by the accept script from a trusted URL; checked again, as Redis is not the configuration.
    if (!trusted.trusts(serviceUrl)) throw new bullmq.UnrecoverableError(untrustedUrl(serviceUrl, trusted).message);
    return createServiceSession({
      ...timing,
      trusted,
      ...(options.auth === undefined ? {} : { auth: options.auth }),
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    });
  }

  /** Why a scope's service is not read now, or undefined: read it. `refuse`: its waiting ranges are refused at once. */
  async function unread(scope: string, serviceUrl: URL): Promise<{ why: string; refuse: boolean } | undefined> {
    if (absent.has(scope)) return { why: NOT_ON_SERVER, refuse: true };
    const verdict = (await options.catalogue?.verdict(serviceUrl)) ?? 'read';
    if (verdict === 'read') return undefined;
    return verdict === 'unlisted' ? { why: NOT_IN_CATALOGUE, refuse: true } : { why: 'the catalogue could not be read', refuse: false };
  }

  /**
   * The generation of a scope's server, read unless {@link unread} says otherwise; `refuse` when the server says
   * the service is not there or not change-tracked (400, 403, 404: the scope is then not read for `absentMs`), or
   * the catalogue does not list it. Other failures are retried. The read began at or after `notBefore` (epoch ms).
   */
  async function serverGenOf(hook: string, scope: string, serviceUrl: URL, notBefore?: number): Promise<GenerationRead> {
    const skipped = await unread(scope, serviceUrl);
    if (skipped !== undefined) return { serverGen: 0, ...skipped };
    try {
      const session = sessionFor(hook, serviceUrl);
      const layers = await generations.get(serviceUrl.href, () => readServerGens(session, serviceUrl), notBefore);
      return { serverGen: scopeGeneration(layers, parseScope(scope).layerId) ?? 0, refuse: false };
    } catch (err) {
      if (!(err instanceof AdminApiError) || err instanceof AdminAuthError || !CLIENT_ERROR.test(String(err.serverCode))) throw err;
      absent.add(scope);
      return { serverGen: 0, why: NOT_ON_SERVER, refuse: true, serverCode: err.serverCode };
    }
  }

  /**
   * Reads the server's generation for the ranges of a scope waiting ahead of it, with a read begun after the newest
   * of them was delivered: those it covers count. While some still wait, the job comes back after `spacingMs` when
   * one was delivered during the read, else after `intervalMs`; it refuses those the server has not reached
   * `refuseAfterMs` after their delivery, or all of them at once when the service is not there.
   */
  async function confirm(job: Job<ConfirmJobData>, token: string | undefined): Promise<undefined> {
    const { scope, hook } = job.data;
    const serviceUrl = new URL(job.data.serviceUrl);
    const newest = await newestWaitingRange(options.connection, options.prefix, scope);
    const { serverGen, why, refuse, serverCode } = await serverGenOf(hook, scope, serviceUrl, newest);
    const range = { scope, from: serverGen, to: serverGen, serviceUrl: serviceUrl.href };
    const { ahead, refused } = await eventQueue.confirm(hook, [range], refuse ? Number.MAX_SAFE_INTEGER : Date.now() - refuseAfterMs);
    if (refused.length > 0) {
      const fields = { scope, url: serviceUrl.href, serverGens: refused.slice(0, 10), refused: refused.length, serverGen, serverCode };
      warnings.warn(fields, why === undefined ? 'range past its server generation refused: not tracked' : `ranges refused: ${why}`);
    }
    if (ahead === 0) return undefined;
    const newestLeft = await newestWaitingRange(options.connection, options.prefix, scope);
    const deliveredSince = newestLeft !== undefined && (newest === undefined || newestLeft > newest);
    await job.moveToDelayed(Date.now() + (deliveredSince ? spacingMs : intervalMs), token);
    throw new bullmq.DelayedError();
  }

  async function fill(job: Job<GapJobData>): Promise<GapOutcome> {
    const { scope, hook, from, to } = job.data;
    const { service, layerId } = parseScope(scope);
    const { folder: folderName = '', name: serviceName } = parseServiceName(service);
    const serviceUrl = new URL(job.data.serviceUrl);
    const skipped = await unread(scope, serviceUrl);
    if (skipped !== undefined) throw skipped.refuse ? new bullmq.UnrecoverableError(skipped.why) : new Error(skipped.why);
    // No 60-s session: a large range can take the server minutes. BullMQ renews the job's lock meanwhile.
    const session = sessionFor(hook, serviceUrl, { deadlineMs: options.fillTimeoutMs ?? 1_800_000, ...FILL_POLLING });
    const { changesUrl, types } = await readGapChanges(session, { serviceUrl, from, to, layerId }).catch((err: unknown) => {
      // The server named a URL geohook does not go to (its job elsewhere): asking again would name it again.
      throw err instanceof GeohookError && err.code === 'GEOHOOK_ERR_UNTRUSTED_URL' ? new bullmq.UnrecoverableError(err.message) : err;
    });
    if (types.length === 0) return { types, duplicate: false };
    const { source = 'backfill' } = job.data;
    const accepted = backfillEvent({
      hook,
      folderName,
      serviceName,
      layerId,
      changesUrl: changesUrl.href,
      when: job.timestamp,
      types,
      source,
    });
    const { duplicate } = await eventQueue.enqueue(accepted);
    const serverGens: [number, number] = [Number(from), Number(to)];
    log.info({ scope, serverGens, types, duplicate }, 'gap backfilled');
    if (!duplicate) options.onFilled?.({ scope, serverGens, types, source });
    return { types, duplicate };
  }

  const run = (job: Job<GapJobData | ConfirmJobData>, token?: string): Promise<GapOutcome | undefined> =>
    job.name === 'confirm' ? confirm(job as Job<ConfirmJobData>, token) : fill(job as Job<GapJobData>);
  const worker = new bullmq.Worker<GapJobData | ConfirmJobData, GapOutcome | undefined>(backfillQueueName, run, {
    connection: options.connection,
    prefix: options.prefix,
    concurrency: options.concurrency ?? 16,
    ...longJobWorkerOptions,
  });
  worker.on('failed', (job, err) => {
    const serverGens = job !== undefined && 'from' in job.data ? [job.data.from, job.data.to] : undefined;
    const what = job?.name === 'confirm' ? 'confirmation' : 'backfill';
    log.warn(
      { err, scope: job?.data.scope, serverGens, attempt: job?.attemptsMade },
      err instanceof bullmq.UnrecoverableError ? `${what} refused` : `${what} failed: retrying`,
    );
  });
  // A range announced while the scope's confirm job was finishing (its read done, the job not yet removed) made no
  // new job: once the job is gone, a scope with ranges still waiting gets one, so none waits for a later delivery.
  worker.on('completed', (job) => {
    if (job.name !== 'confirm') return;
    const { scope } = job.data as ConfirmJobData;
    void options.connection
      .hexists(aheadKey(options.prefix), scope)
      .then(async (waiting) => {
        if (waiting === 1) await eventQueue.backfillQueue().add('confirm', job.data, { ...confirmJobOptions, jobId: confirmJobId(scope) });
      })
      .catch((err: unknown) => log.warn({ err, scope }, 'confirmation not requeued: the next delivery or pass will'));
  });
  logWorkerErrors(worker, log, 'backfill worker error');
  return worker;
}
