import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { Webhook } from 'standardwebhooks';
import { notifyParent, serveParent } from '../ipc.js';

/**
 * The relay users would write themselves, in a process of its own: a BullMQ worker (its default concurrency) that
 * signs each event with the reference library and awaits one `fetch` per event. Started with
 * `{redisUrl, prefix, queue, url, secret}` as JSON.
 */
const { redisUrl, prefix, queue, url, secret } = JSON.parse(process.argv[2] ?? '{}') as Record<string, string>;
const webhook = new Webhook(secret!);
const worker = new Worker(
  queue!,
  async (job) => {
    const body = JSON.stringify({ type: job.name, timestamp: new Date().toISOString(), data: job.data as unknown });
    const at = new Date();
    const response = await fetch(url!, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': job.id!,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': webhook.sign(job.id!, at, body),
      },
      body,
    });
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`answered ${response.status}`);
  },
  { connection: new Redis(redisUrl!, { maxRetriesPerRequest: null }), prefix: prefix!, autorun: false },
);
serveParent({
  run: () => void worker.run(),
  close: () => worker.close(),
});
notifyParent('ready');
