import { UnrecoverableError } from 'bullmq';
import { z } from 'zod';
import type { EventFamily, GeohookEvent } from '../queue/envelope.js';

const envelopeSchema = z.object({
  id: z.string().min(1),
  hook: z.string().min(1),
  type: z.string().min(1),
  types: z.array(z.string().min(1)).min(1),
  family: z.enum(['gp', 'feature', 'unknown']),
  receivedAt: z.string().min(1),
  service: z.object({ folderName: z.string().optional(), serviceName: z.string().optional(), serviceType: z.string().optional() }),
  contentType: z.string(),
  verified: z.boolean(),
  payload: z.unknown(),
  rawBody: z.string(),
});

/**
 * Checks that job data is a geohook envelope of the queue's family. Anything else is a poison event:
 * no retry can fix it, so it fails at once with BullMQ's `UnrecoverableError` and stays in the failed set.
 */
export function validateEvent(data: unknown, family: EventFamily): GeohookEvent {
  const parsed = envelopeSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new UnrecoverableError(`poison event: ${issue.path.join('.') || 'data'}: ${issue.message}`);
  }
  const event = parsed.data as GeohookEvent;
  if (event.family !== family) throw new UnrecoverableError(`poison event: a ${event.family} event in the ${family} queue`);
  if (event.types[0] !== event.type) throw new UnrecoverableError('poison event: type is not types[0]');
  return event;
}
