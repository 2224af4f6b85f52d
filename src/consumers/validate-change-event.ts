import { UnrecoverableError } from 'bullmq';
import { z } from 'zod';
import type { ChangeEvent } from '../changes/change-event.js';

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

/** The change event of a job's data; anything else is a poison event (BullMQ's `UnrecoverableError`). */
export function validateChangeEvent(data: unknown): ChangeEvent {
  const parsed = changeEventSchema.loose().safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new UnrecoverableError(`poison change event: ${issue.path.join('.') || 'data'}: ${issue.message}`);
  }
  return data as ChangeEvent;
}
