import type { Worker } from 'bullmq';
import type { Logger } from 'pino';
import type { GeohookError } from '../errors.js';
import { redisAuthError } from '../redis/auth-refusal.js';
import type { RedisClient } from '../redis/connection.js';

/** Options of {@link watchPasswordRefusal}. */
export interface PasswordRefusalOptions {
  readonly workers: readonly Worker[];
  readonly redis: RedisClient;
  /** The subscription opened `redis`: it is disconnected once the workers stop. */
  readonly owned: boolean;
  readonly logger: Logger;
  /** What carried the password, for the message: REDIS_URL, or the connection given. */
  readonly source: string;
}

/** A subscription's workers getting connected, and what they do when Redis refuses the password. */
export interface PasswordRefusal {
  /** Redis refused the password (an error {@link isAuthRefusal} matched): said once, whatever the number of tries. */
  refuse(err: Error): void;
  /** Resolves once every worker is connected; rejects with `GEOHOOK_ERR_REDIS_AUTH` when Redis refused first. */
  connected(): Promise<void>;
}

/**
 * A refused password is said once. Before the workers have connected it stops them (retrying with the same password
 * cannot succeed) and {@link PasswordRefusal.connected} rejects with it, logged as well when nobody waits on it yet;
 * once they had connected (the password changed since) it is logged and BullMQ keeps retrying.
 */
export function watchPasswordRefusal({ workers, redis, owned, logger, source }: PasswordRefusalOptions): PasswordRefusal {
  let refused: GeohookError | undefined;
  let waited = false;
  let connected = false;
  const connecting = Promise.all(workers.map((worker) => worker.waitUntilReady())).then(() => {
    connected = true;
  });
  let rejectRefused!: (err: GeohookError) => void;
  const refusal = new Promise<never>((_resolve, reject) => (rejectRefused = reject));
  for (const settling of [connecting, refusal]) settling.catch(() => undefined); // connected() reports them
  return {
    refuse(err) {
      if (refused !== undefined) return;
      refused = redisAuthError(redis, err, source);
      if (!waited || connected) logger.error({ code: refused.code }, refused.message);
      if (connected) return;
      rejectRefused(refused);
      void Promise.all(workers.map((worker) => worker.close(true))).then(() => (owned ? redis.disconnect() : undefined));
    },
    connected() {
      waited = true;
      return Promise.race([connecting, refusal]);
    },
  };
}
