import pino from 'pino';
import { subscribe } from '../../../src/consumers/subscribe.js';
import { notifyParent, serveParent } from '../ipc.js';

/**
 * A change-event consumer in a process of its own: geohook's `subscribe` with a `change.*` handler that records
 * when each event was handed to it, by the `parcel_id` of its row. Started with `{redisUrl, prefix}` as JSON.
 */
const { redisUrl, prefix } = JSON.parse(process.argv[2] ?? '{}') as { redisUrl: string; prefix: string };
const receivedAtMs = new Map<string, number>();
const subscription = subscribe({
  connection: redisUrl,
  prefix,
  logger: pino({ level: 'silent' }),
  handlers: {
    'change.*': (event) => {
      const parcelId = event.after?.attributes.parcel_id;
      if (typeof parcelId === 'string') receivedAtMs.set(parcelId, Date.now());
    },
  },
});
await subscription.ready();
serveParent({
  /** Epoch ms each event was handed over, by parcel id. */
  receipts: (): Record<string, number> => Object.fromEntries(receivedAtMs),
  close: () => subscription.close({ timeoutMs: 5000 }),
});
notifyParent('ready');
