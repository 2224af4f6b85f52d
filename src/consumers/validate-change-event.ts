import { z } from 'zod';
import type { ChangeEvent } from '../changes/change-event.js';
import type { SubmissionEvent } from '../changes/submission-event.js';
import { bullmq } from '../commonjs/bullmq.js';

const row = z.object({ attributes: z.record(z.string(), z.unknown()), geometry: z.unknown().optional() });

const changeEventSchema = z.object({
  id: z.string().min(1),
  type: z.enum(['change.created', 'change.updated', 'change.deleted', 'change.read', 'change.schema', 'change.entered', 'change.left']),
  op: z.enum(['c', 'u', 'd', 'r']).optional(),
  hook: z.string().min(1),
  service: z.object({ serviceName: z.string().min(1), serviceType: z.literal('FeatureServer'), url: z.string() }).loose(),
  layer: z.object({ id: z.number(), name: z.string() }),
  key: z.object({ objectId: z.union([z.number(), z.string()]).optional(), globalId: z.string().optional() }),
  after: row.nullable(),
  before: row.nullable().optional(),
  source: z
    .object({
      origin: z.enum(['webhook', 'backfill', 'poll', 'snapshot', 'replay']),
      serverGens: z.tuple([z.number(), z.number()]),
      transaction: z.object({ id: z.string(), index: z.number(), total: z.number() }),
    })
    .loose(),
  ts: z.string().min(1),
});

const feature = z.object({
  layer: z.object({ id: z.number(), name: z.string() }),
  key: z.object({ objectId: z.union([z.number(), z.string()]).optional(), globalId: z.string().optional() }),
  after: row.nullable(),
});

const submissionEventSchema = z.object({
  id: z.string().min(1),
  type: z.literal('change.submission'),
  hook: z.string().min(1),
  service: z.object({ serviceName: z.string().min(1), serviceType: z.literal('FeatureServer'), url: z.string() }).loose(),
  parent: feature,
  related: z.array(feature),
  attachments: z.array(z.object({ id: z.number(), sha256: z.string() }).loose()),
  closedBy: z.enum(['survey123', 'window']),
  ts: z.string().min(1),
});

/** The change event (or `change.submission`) of a job's data; anything else is a poison event (BullMQ's `UnrecoverableError`). */
export function validateChangeEvent(data: unknown): ChangeEvent | SubmissionEvent {
  const submission = (data as { type?: unknown } | null)?.type === 'change.submission';
  const parsed = (submission ? submissionEventSchema : changeEventSchema).loose().safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new bullmq.UnrecoverableError(`poison change event: ${issue.path.join('.') || 'data'}: ${issue.message}`);
  }
  return data as ChangeEvent | SubmissionEvent;
}
