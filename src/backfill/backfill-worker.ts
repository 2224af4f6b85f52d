import { Worker, type Job } from 'bullmq';
import type { Logger } from 'pino';
import type { AdminAuth } from '../arcgis/admin-auth.js';
import { parseServiceName } from '../arcgis/service-name.js';
import { createFollowUpSession, type FollowUpSession } from '../consumers/follow-up-request.js';
import { readChanges } from '../consumers/follow-up.js';
import {
  BACKFILL_LOCK_MS,
  BACKFILL_MAX_STALLED_COUNT,
  BACKFILL_STALLED_CHECK_MS,
  backfillBackoff,
  type GapJobData,
} from '../queue/backfill-jobs.js';
import type { EventQueue } from '../queue/event-queue.js';
import { backfillQueueName } from '../queue/names.js';
import { parseScope } from '../queue/tracked-ranges.js';
import type { RedisClient } from '../redis/connection.js';
import { backfillEvent, changeTypesFound } from './backfill-event.js';

/** Options of {@link startBackfill}. */
export interface BackfillOptions {
  /** A connection of its own (blocking reads, `maxRetriesPerRequest: null`); the caller closes it after the worker. */
  connection: RedisClient;
  /** BullMQ key prefix (`GEOHOOK_PREFIX`). */
  prefix: string;
  /** Where backfilled ranges are enqueued. */
  eventQueue: EventQueue;
  /** Credentials for `extractChanges` (ADMIN_URL's); none: the services are read without a token. */
  auth?: AdminAuth;
  logger: Logger;
  /** Gaps filled at once. @defaultValue 2 */
  concurrency?: number;
  /** @defaultValue globalThis.fetch */
  fetch?: typeof fetch;
  /** Called when a gap held edits and their event was enqueued (the `gap.backfilled` alert). */
  onFilled?: (gap: { scope: string; serverGens: [number, number]; types: string[]; source: 'backfill' | 'poll' }) => void;
}

/** What a gap's job did: the change types of the event it enqueued, or none when the range held no edit. */
export interface GapOutcome {
  types: string[];
  duplicate: boolean;
}

/** The layer ids of a feature service, from its REST resource. */
async function layerIdsOf(session: FollowUpSession, serviceUrl: URL): Promise<number[]> {
  const resource = await session.read(serviceUrl, serviceUrl);
  const layers = Array.isArray(resource.layers) ? (resource.layers as { id?: unknown }[]) : [];
  return layers.map((layer) => layer.id).filter((id): id is number => Number.isSafeInteger(id));
}

/**
 * Fills the gaps the accept script finds (docs/backfill.md): for each, asks the feature service's
 * `extractChanges` for the generations in between and, when they hold edits, enqueues one feature event
 * (`source: "backfill"`) for the range. A failure (the server down, a token refused) is retried with backoff
 * (1 s doubling to 60 s), never on the acknowledgement's path. Safe with any number of receivers: BullMQ hands
 * each gap to one worker, and the event's id is the same for the same range.
 */
export function startBackfill(options: BackfillOptions): Worker<GapJobData, GapOutcome> {
  const { eventQueue, logger } = options;
  const log = logger.child({ component: 'backfill' });
  const followUp = {
    ...(options.auth === undefined ? {} : { auth: options.auth }),
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  };

  async function fill(job: Job<GapJobData>): Promise<GapOutcome> {
    const { scope, hook, from, to } = job.data;
    const { service, layerId } = parseScope(scope);
    const { folder: folderName = '', name: serviceName } = parseServiceName(service);
    const serviceUrl = new URL(job.data.serviceUrl);
    const session = createFollowUpSession(followUp);
    const layers = layerId === undefined ? await layerIdsOf(session, serviceUrl) : [layerId];
    const url = new URL(`${serviceUrl.href}/extractChanges`);
    url.searchParams.set('serverGens', `[${from},${to}]`);
    url.searchParams.set('layers', `[${layers.join(',')}]`);
    const changes = await readChanges(session, url);
    const types = changeTypesFound(changes.edits);
    if (types.length === 0) return { types, duplicate: false };
    const { source = 'backfill' } = job.data;
    const event = backfillEvent({ hook, folderName, serviceName, layerId, changesUrl: url.href, when: job.timestamp, types, source });
    const { duplicate } = await eventQueue.enqueue(event);
    const serverGens: [number, number] = [Number(from), Number(to)];
    log.info({ scope, serverGens, types, duplicate }, 'gap backfilled');
    if (!duplicate) options.onFilled?.({ scope, serverGens, types, source });
    return { types, duplicate };
  }

  const worker = new Worker<GapJobData, GapOutcome>(backfillQueueName, fill, {
    connection: options.connection,
    prefix: options.prefix,
    concurrency: options.concurrency ?? 2,
    maxStalledCount: BACKFILL_MAX_STALLED_COUNT,
    lockDuration: BACKFILL_LOCK_MS,
    stalledInterval: BACKFILL_STALLED_CHECK_MS,
    settings: { backoffStrategy: backfillBackoff },
  });
  worker.on('failed', (job, err) =>
    log.warn(
      { err, scope: job?.data.scope, serverGens: job && [job.data.from, job.data.to], attempt: job?.attemptsMade },
      'backfill failed: retrying',
    ),
  );
  worker.on('error', (err) => log.error({ err }, 'backfill worker error'));
  return worker;
}
