import { DelayedError, UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Logger } from 'pino';
import type { ResolvedAdminAuth } from '../arcgis/admin-auth.js';
import type { ServiceLocator } from '../arcgis/service-locator.js';
import { parseServiceName } from '../arcgis/service-name.js';
import { createServiceSession, untrustedUrl, type ServiceSession, type ServiceSessionOptions } from '../arcgis-request/service-session.js';
import { AdminApiError, AdminAuthError, GeohookError } from '../errors.js';
import { parseScope } from '../events/tracked-ranges.js';
import type { ConfirmJobData, GapJobData } from '../queue/accept-script.js';
import {
  BACKFILL_LOCK_MS,
  BACKFILL_MAX_STALLED_COUNT,
  BACKFILL_STALLED_CHECK_MS,
  backfillBackoff,
  confirmJobId,
  confirmJobOptions,
} from '../queue/backfill-jobs.js';
import type { EventQueue } from '../queue/event-queue.js';
import { backfillQueueName } from '../queue/names.js';
import type { RedisClient } from '../redis/connection.js';
import { aheadKey } from '../redis/keys.js';
import { backfillEvent } from './backfill-event.js';
import { readGapChanges } from './gap-changes.js';
import { readServerGens, scopeGeneration } from './server-generations.js';

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
  /** Between two reads while ranges wait. @defaultValue 1000 */
  intervalMs?: number;
  /** A range the server has not reached this long after it was delivered is refused: not tracked. @defaultValue 60000 */
  refuseAfterMs?: number;
}

/** The server's answer for a service that is not there, or not change-tracked: 400, 403, 404. */
const CLIENT_ERROR = /^40[034]$/;

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
  const { intervalMs = 1000, refuseAfterMs = 60_000 } = options.confirmation ?? {};

  /** A session for the service at `serviceUrl`, or an error that fails the job for good when no configuration trusts it. */
  function sessionFor(
    hook: string,
    serviceUrl: URL,
    timing: Pick<ServiceSessionOptions, 'deadlineMs' | 'pollIntervalMs' | 'maxPollIntervalMs'> = {},
  ): ServiceSession {
    const trusted = options.serviceLocator.trusted(hook);
    // Written by the accept script from a trusted URL; checked again, as Redis is not the configuration.
    if (!trusted.trusts(serviceUrl)) throw new UnrecoverableError(untrustedUrl(serviceUrl, trusted).message);
    return createServiceSession({
      ...timing,
      trusted,
      ...(options.auth === undefined ? {} : { auth: options.auth }),
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    });
  }

  /**
   * The generation of a scope's server; 0 (it confirms nothing) when the server says the service is not there
   * or not change-tracked: the ranges announced for it are then refused in time. Other failures are retried.
   */
  async function serverGenOf(session: ServiceSession, serviceUrl: URL, layerId: number | undefined): Promise<number> {
    try {
      return scopeGeneration(await readServerGens(session, serviceUrl), layerId) ?? 0;
    } catch (err) {
      if (!(err instanceof AdminApiError) || err instanceof AdminAuthError || !CLIENT_ERROR.test(String(err.serverCode))) throw err;
      log.warn({ url: serviceUrl.href, serverCode: err.serverCode }, 'a service announced in a delivery is not on its server');
      return 0;
    }
  }

  /**
   * Reads the server's generation for the ranges of a scope waiting ahead of it: those it covers count; the job
   * comes back after `intervalMs` while some still wait, and refuses those the server has not reached
   * `refuseAfterMs` after their delivery.
   */
  async function confirm(job: Job<ConfirmJobData>, token: string | undefined): Promise<undefined> {
    const { scope, hook } = job.data;
    const serviceUrl = new URL(job.data.serviceUrl);
    const serverGen = await serverGenOf(sessionFor(hook, serviceUrl), serviceUrl, parseScope(scope).layerId);
    const range = { scope, from: serverGen, to: serverGen, serviceUrl: serviceUrl.href };
    const { ahead, refused } = await eventQueue.confirm(hook, [range], Date.now() - refuseAfterMs);
    for (const serverGens of refused) log.warn({ scope, serverGens, serverGen }, 'range past its server generation refused: not tracked');
    if (ahead === 0) return undefined;
    await job.moveToDelayed(Date.now() + intervalMs, token);
    throw new DelayedError();
  }

  async function fill(job: Job<GapJobData>): Promise<GapOutcome> {
    const { scope, hook, from, to } = job.data;
    const { service, layerId } = parseScope(scope);
    const { folder: folderName = '', name: serviceName } = parseServiceName(service);
    const serviceUrl = new URL(job.data.serviceUrl);
    // No 60-s session: a large range can take the server minutes. BullMQ renews the job's lock meanwhile.
    const session = sessionFor(hook, serviceUrl, { deadlineMs: options.fillTimeoutMs ?? 1_800_000, ...FILL_POLLING });
    const { changesUrl, types } = await readGapChanges(session, { serviceUrl, from, to, layerId }).catch((err: unknown) => {
      // The server named a URL geohook does not go to (its job elsewhere): asking again would name it again.
      throw err instanceof GeohookError && err.code === 'GEOHOOK_ERR_UNTRUSTED_URL' ? new UnrecoverableError(err.message) : err;
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
  const worker = new Worker<GapJobData | ConfirmJobData, GapOutcome | undefined>(backfillQueueName, run, {
    connection: options.connection,
    prefix: options.prefix,
    concurrency: options.concurrency ?? 16,
    maxStalledCount: BACKFILL_MAX_STALLED_COUNT,
    lockDuration: BACKFILL_LOCK_MS,
    stalledInterval: BACKFILL_STALLED_CHECK_MS,
    settings: { backoffStrategy: backfillBackoff },
  });
  worker.on('failed', (job, err) => {
    const serverGens = job !== undefined && 'from' in job.data ? [job.data.from, job.data.to] : undefined;
    const what = job?.name === 'confirm' ? 'confirmation' : 'backfill';
    log.warn(
      { err, scope: job?.data.scope, serverGens, attempt: job?.attemptsMade },
      err instanceof UnrecoverableError ? `${what} refused` : `${what} failed: retrying`,
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
  worker.on('error', (err) => log.error({ err }, 'backfill worker error'));
  return worker;
}
