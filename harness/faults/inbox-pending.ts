import { Redis } from 'ioredis';
import type { ReceiverProcess } from './receiver-process.js';

/**
 * Entries of the inbox stream `<prefix>:inbox` that a mover has read and not yet moved (the pending
 * entries of its consumer groups, read with XINFO GROUPS so that the group's name stays the mover's
 * business). 0 when the stream does not exist yet.
 */
export async function inboxPending(redis: Redis, prefix: string): Promise<number> {
  const groups = (await redis.xinfo('GROUPS', `${prefix}:inbox`).catch(() => [])) as unknown[][];
  let pending = 0;
  for (const fields of groups) {
    const at = fields.indexOf('pending');
    if (at !== -1) pending += Number(fields[at + 1]);
  }
  return pending;
}

/**
 * Kills `receiver` at a moment its inbox mover holds read-but-unmoved entries, when one comes within
 * `timeoutMs`: polls until some entry is pending, freezes the receiver (SIGSTOP) and reads again; still
 * pending, it is killed frozen, so the dead mover's entries are certain to be left for a takeover; else it
 * is resumed and the hunt goes on. Past `timeoutMs` it is killed anyway. Resolves with the entries left.
 */
export async function killHoldingInboxEntries(
  receiver: ReceiverProcess,
  redisUrl: string,
  prefix: string,
  timeoutMs: number,
): Promise<number> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const deadline = Date.now() + timeoutMs;
  try {
    while (Date.now() < deadline) {
      if ((await inboxPending(redis, prefix)) === 0) continue;
      receiver.pause();
      if ((await inboxPending(redis, prefix)) > 0) break;
      receiver.resume();
    }
    await receiver.kill();
    return await inboxPending(redis, prefix);
  } finally {
    redis.disconnect();
  }
}

/** One reading of {@link inboxPending} on a connection of its own. */
export async function readInboxPending(redisUrl: string, prefix: string): Promise<number> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  try {
    return await inboxPending(redis, prefix);
  } finally {
    redis.disconnect();
  }
}
