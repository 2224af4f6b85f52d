import type { Job } from 'bullmq';
import { bullmq } from '../commonjs/bullmq.js';
import { AdminApiError, AdminAuthError } from '../errors.js';
import { parseScope, scopeOf } from '../events/tracked-ranges.js';
import type { RedisClient } from '../redis/connection.js';
import { changesAttachmentParentsKey, changesResolvedKey, changesSchemasKey } from '../redis/keys.js';
import type { AttachmentParents } from './attachment-changes.js';
import { commitBatch } from './batch-commit.js';
import { CHANGE_BATCH, type PreparedEvents } from './change-writer.js';
import { clearFailedRange, recordFailedRange } from './failed-ranges.js';
import type { ResolveJobData } from './range-jobs.js';
import { openRange, type OpenedRange, type RangeBatch } from './resolve-range.js';
import type { ResolverContext } from './resolver-context.js';
import { submissionPartsOf, type SubmissionPart } from './submission-parts.js';

/** How long a submission stays open after its last part when the service's settings say nothing, ms. */
export const DEFAULT_SUBMISSION_WINDOW_MS = 3000;

/** The server's answers to a range it will not give: bad request, forbidden, not found. */
const CLIENT_ERROR = /^40[034]$/;

/**
 * The parents of a layer's attachments, in the hash `key`: attachment GlobalID → `<parent GlobalID>\t<attachment id>`,
 * from its add until its delete is written.
 */
const attachmentParentsOf = (connection: RedisClient, key: string): AttachmentParents => ({
  record: async (_layerId, entries) => {
    if (entries.length > 0)
      await connection.hset(key, Object.fromEntries(entries.map((entry) => [entry.globalId, `${entry.parentGlobalId}\t${entry.id}`])));
  },
  read: async (_layerId, globalIds) =>
    globalIds.length === 0
      ? []
      : (await connection.hmget(key, ...globalIds)).map((value) => {
          if (value === null) return undefined;
          const [parentGlobalId = '', id = ''] = value.split('\t');
          return { parentGlobalId, id: Number(id) };
        }),
  forget: async (_layerId, globalIds) => {
    if (globalIds.length > 0) await connection.hdel(key, ...globalIds);
  },
});

/** A job's range, opened: its layers read, its changes streamed; a range the server refuses fails for good. */
async function openJobRange(context: ResolverContext, data: ResolveJobData): Promise<OpenedRange> {
  const { connection, prefix, hook } = context.options;
  const { scope, from, to, origin = 'webhook' } = data;
  const settings = context.options.byService?.[parseScope(scope).service];
  // A server that refuses the range (400, 403, 404: history no longer kept, a service gone) will not change its mind.
  return openRange(
    { hook, scope, serviceUrl: new URL(data.serviceUrl), from, to },
    {
      session: context.sessionOf(context.rangeTimeoutMs),
      previous: context.previous,
      prefix,
      track: settings?.track ?? context.options.track,
      ...(settings?.layers === undefined ? {} : { layers: settings.layers }),
      ...(settings === undefined ? {} : { filters: settings }),
      ...(settings?.attachments === undefined ? {} : { attachments: settings.attachments }),
      ...(context.options.attachmentLink === undefined ? {} : { attachmentLink: context.options.attachmentLink }),
      attachmentParents: (layerScope) => attachmentParentsOf(connection, changesAttachmentParentsKey(prefix, layerScope)),
      origin,
      ...(context.orgId === undefined ? {} : { orgId: context.orgId }),
      knownSchemas: async (layerScopes) =>
        layerScopes.length === 0
          ? []
          : (await connection.hmget(changesSchemasKey(prefix), ...layerScopes)).map((value) =>
              value === null ? undefined : (JSON.parse(value) as string[]),
            ),
    },
  ).catch((err: unknown) => {
    const refused = err instanceof AdminApiError && !(err instanceof AdminAuthError) && CLIENT_ERROR.test(String(err.serverCode));
    throw refused ? new bullmq.UnrecoverableError(err.message) : err;
  });
}

/** The service's submission window, ms; 0: no submissions. */
const windowOf = (context: ResolverContext, data: ResolveJobData): number =>
  context.options.byService?.[parseScope(data.scope).service]?.submissionWindowMs ?? DEFAULT_SUBMISSION_WINDOW_MS;

/** A batch read, and made ready to write: its events' jobs and its submission parts (docs/submissions.md). */
interface ReadyBatch {
  read: RangeBatch;
  events: PreparedEvents;
  parts: SubmissionPart[];
}

/** The CPU a batch's writes need, spent before them: while the batch before it is written, Redis is busy. */
function readyBatch(context: ResolverContext, data: ResolveJobData, opened: OpenedRange, read: RangeBatch): ReadyBatch {
  const events = context.writer().prepare(read.events, opened.layers);
  const parts = windowOf(context, data) === 0 ? [] : submissionPartsOf(read.events, opened.layers, parseScope(data.scope).service);
  return { read, events, parts };
}

/** A batch's submission parts, recorded once its events are written. */
async function recordSubmissions(
  context: ResolverContext,
  data: ResolveJobData,
  parts: SubmissionPart[],
  touched: Set<string>,
): Promise<void> {
  if (parts.length === 0) return;
  const { service } = parseScope(data.scope);
  // A parent kept as a reference is no submission yet, unless a Survey123 webhook waited for it.
  for (const part of parts) if (part.field !== 'ref') touched.add(part.submission);
  const { closed } = await context.submissions.record(parts, scopeOf(context.options.hook, service), windowOf(context, data));
  for (const submission of closed) touched.add(submission);
}

/**
 * Writes the range's events from the first the job has not written, batch after batch; returns how many were new.
 * Each batch is read (file, previous values) and made ready while the one before it is written: a batch's events
 * are written before its previous values, which are written with the cursor past them ({@link commitBatch}), so that
 * a crash resumes at the batch it stopped in, built against the values it was first built against.
 */
async function writeEvents(context: ResolverContext, job: Job<ResolveJobData>, opened: OpenedRange): Promise<number> {
  const { total } = opened;
  const batchAt = (start: number) => {
    if (start >= total) return undefined;
    const batch = opened.events(start, Math.min(start + CHANGE_BATCH, total)).then((read) => readyBatch(context, job.data, opened, read));
    // Awaited in its turn; meanwhile a failure must not go unhandled.
    batch.catch(() => undefined);
    return batch;
  };
  let added = 0;
  let written = job.data.written ?? 0;
  let next = batchAt(written);
  const touched = new Set<string>();
  try {
    while (next !== undefined) {
      const batch = await next;
      const end = Math.min(written + CHANGE_BATCH, total);
      next = batchAt(end);
      added += await context.writer().writePrepared(batch.events);
      await recordSubmissions(context, job.data, batch.parts, touched);
      await commitBatch(context.options.connection, context.previous, job, batch.read.writes, end);
      written = end;
    }
    await context.submissions.settle(touched);
  } finally {
    await next?.catch(() => undefined);
    await opened.close();
  }
  return added;
}

/**
 * A range whose events are written: the scope resolved up to what was read (ids only, up to now: the next range
 * starts after it), the layers' schemas kept, the claim released. A replay moves nothing.
 */
async function settleRange(context: ResolverContext, data: ResolveJobData, opened: OpenedRange): Promise<void> {
  const { connection, prefix } = context.options;
  const { scope, from, to } = data;
  await clearFailedRange(connection, prefix, scope, { from, to });
  if (data.origin === 'replay') return;
  await opened.forgetDeletedAttachments();
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
  await context.claims.release({ scope, from, to });
}

/** Resolves a job's range into change events (a retry goes on after those written); returns how many were new. */
export async function resolveRangeJob(context: ResolverContext, job: Job<ResolveJobData>): Promise<number> {
  const opened = await openJobRange(context, job.data);
  const added = await writeEvents(context, job, opened);
  await settleRange(context, job.data, opened);
  if (job.data.origin === 'replay') return added;
  const { scope, from, to } = job.data;
  const line = { scope, serverGens: [from, to], events: opened.total, added };
  // A range without an edit (the generation a pass read moved the watermark) is routine.
  if (opened.total === 0) context.log.debug(line, 'range resolved: no change');
  else context.log.info(line, 'range resolved into change events');
  return added;
}

/**
 * A resolve job that failed: said, and, once it failed for good, recorded (`geohook changes` lists it), its claim
 * released so the scope goes on, and the `change.unresolvable` alert sent.
 */
export function rangeJobFailed(context: ResolverContext, job: Job<ResolveJobData> | undefined, err: Error): void {
  if (job === undefined) return;
  const final = err instanceof bullmq.UnrecoverableError || job.attemptsMade >= (job.opts.attempts ?? 1);
  const { scope, from, to } = job.data;
  context.log.warn(
    { err, scope, serverGens: [from, to], attempt: job.attemptsMade },
    final ? 'range failed for good' : 'range resolution failed: retrying',
  );
  if (!final) return;
  const { connection, prefix } = context.options;
  void recordFailedRange(connection, prefix, scope, { from, to, error: err.message, at: new Date().toISOString() })
    .then(() => context.claims.release({ scope, from, to }))
    .catch(() => undefined);
  void context.options.alert?.({
    event: 'change.unresolvable',
    service: scope,
    serverGens: [from, to],
    error: err.message,
    text: `geohook: the change events of ${scope} in server generations (${from}, ${to}] could not be resolved; geohook changes replay resolves them again`,
  });
}
