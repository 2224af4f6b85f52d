import { z } from 'zod';
import { bullmq } from '../commonjs/bullmq.js';
import type { EventFamily, GeohookEvent, StoredEvent } from '../events/envelope.js';
import { eventFromStored } from '../events/stored-event.js';

const fields = {
  id: z.string().min(1),
  hook: z.string().min(1),
  type: z.string().min(1),
  types: z.array(z.string().min(1)).min(1),
  family: z.enum(['gp', 'feature', 'unknown']),
  receivedAt: z.string().min(1),
  service: z.object({ folderName: z.string().optional(), serviceName: z.string().optional(), serviceType: z.string().optional() }),
  contentType: z.string(),
  verified: z.boolean(),
  changes: z.unknown().optional(),
};

/** The stored form (docs/events.md#the-stored-form); `payload` only for forms. */
const storedSchema = z.object({
  ...fields,
  bodyEncoding: z.enum(['utf8', 'base64']),
  body: z.string(),
  payload: z.unknown().optional(),
  source: z.enum(['backfill', 'poll']).optional(),
});

/** The form geohook 0.1 stored: the payload and base64 bytes in every job. */
const earlierSchema = z.object({ ...fields, payload: z.unknown(), rawBody: z.string() });

/**
 * The event of a job's data: a stored geohook event of the queue's family (or one stored by geohook 0.1),
 * its payload parsed. Anything else is a poison event: no retry can fix it, so it fails at once with
 * BullMQ's `UnrecoverableError` and stays in the failed set.
 */
export function validateEvent(data: unknown, family: EventFamily): GeohookEvent {
  const earlier = typeof data === 'object' && data !== null && 'rawBody' in data;
  const parsed = (earlier ? earlierSchema : storedSchema).safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new bullmq.UnrecoverableError(`poison event: ${issue.path.join('.') || 'data'}: ${issue.message}`);
  }
  if (parsed.data.family !== family)
    throw new bullmq.UnrecoverableError(`poison event: a ${parsed.data.family} event in the ${family} queue`);
  if (parsed.data.types[0] !== parsed.data.type) throw new bullmq.UnrecoverableError('poison event: type is not types[0]');
  if ('rawBody' in parsed.data) return { ...parsed.data, source: 'webhook' } as GeohookEvent;
  try {
    return eventFromStored(parsed.data as StoredEvent);
  } catch (err) {
    throw new bullmq.UnrecoverableError(`poison event: body: not JSON (${(err as Error).message})`);
  }
}
