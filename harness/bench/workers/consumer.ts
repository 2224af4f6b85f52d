import { subscribe } from '../../../src/consumers/subscribe.js';
import { notifyParent, serveParent } from '../ipc.js';

/** What the consumer reports. */
export interface ConsumerStats {
  consumed: number;
  /** Epoch ms of the first and the last event handled. */
  firstAtMs: number | undefined;
  lastAtMs: number | undefined;
}

/**
 * The end-to-end consumer, in a process of its own: geohook's `subscribe` with a no-op handler for every
 * event. Started with `{redisUrl, prefix, concurrency}` as JSON.
 */
const { redisUrl, prefix, concurrency } = JSON.parse(process.argv[2] ?? '{}') as { redisUrl: string; prefix: string; concurrency: number };
const stats: ConsumerStats = { consumed: 0, firstAtMs: undefined, lastAtMs: undefined };
const subscription = subscribe({
  connection: redisUrl,
  prefix,
  concurrency,
  handlers: {
    '*': () => {
      const now = Date.now();
      stats.firstAtMs ??= now;
      stats.lastAtMs = now;
      stats.consumed += 1;
    },
  },
});
await subscription.ready();
serveParent({
  stats: (): ConsumerStats => stats,
  close: () => subscription.close({ timeoutMs: 5000 }),
});
notifyParent('ready');
