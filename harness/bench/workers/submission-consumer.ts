import pino from 'pino';
import { subscribe } from '../../../src/consumers/subscribe.js';
import { notifyParent, serveParent } from '../ipc.js';

/**
 * A `change.submission` consumer in a process of its own: geohook's `subscribe` with a handler that records when each
 * submission was handed to it, by its parent's GlobalID, and what closed it. Started with `{redisUrl, prefix}` as JSON.
 */
const { redisUrl, prefix } = JSON.parse(process.argv[2] ?? '{}') as { redisUrl: string; prefix: string };
const receipts = new Map<string, { atMs: number; closedBy: string }>();
const subscription = subscribe({
  connection: redisUrl,
  prefix,
  logger: pino({ level: 'silent' }),
  handlers: {
    'change.submission': (event) => {
      receipts.set(String(event.key.globalId), { atMs: Date.now(), closedBy: event.closedBy });
    },
  },
});
await subscription.ready();
serveParent({
  /** Epoch ms each submission was handed over and what closed it, by its parent's GlobalID. */
  receipts: (): Record<string, { atMs: number; closedBy: string }> => Object.fromEntries(receipts),
  close: () => subscription.close({ timeoutMs: 5000 }),
});
notifyParent('ready');
