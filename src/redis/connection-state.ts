import { isAuthRefusal, redisAuthError } from './auth-refusal.js';
import type { RedisClient } from './connection.js';

/** The last refusal of its credentials by each connection watched, until it is ready again. */
const refusals = new WeakMap<RedisClient, Error | undefined>();

/** ioredis's states of a connection that cannot take commands, as a reason says them. */
const STATES: Readonly<Record<string, string>> = {
  wait: 'not connected yet',
  connecting: 'connecting',
  connect: 'connecting',
  reconnecting: 'reconnecting',
  close: 'closed',
  end: 'closed',
};

/** Notes the refusals of `connection`'s credentials from now on, for {@link unavailableReason} (once per connection). */
export function watchCredentials(connection: RedisClient): void {
  if (refusals.has(connection)) return;
  refusals.set(connection, undefined);
  connection
    .on('error', (err: Error) => {
      if (isAuthRefusal(err)) refusals.set(connection, err);
    })
    .on('ready', () => refusals.set(connection, undefined));
}

/**
 * Why `connection` cannot take commands now, for `/readyz` and the 503 answers: Redis refusing its password (which
 * Redis, and the fix; never the password) when it last did since it was ready, else its state (`Redis is
 * reconnecting`).
 */
export function unavailableReason(connection: RedisClient): string {
  const refusal = refusals.get(connection);
  if (refusal !== undefined) return redisAuthError(connection, refusal).message;
  return `Redis is ${STATES[connection.status] ?? connection.status}`;
}
