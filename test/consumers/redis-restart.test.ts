import { randomUUID } from 'node:crypto';
import t from 'tap';
import { subscribe } from '../../src/consumers/subscribe.js';
import { sign } from '../../src/signature/sign.js';
import { startReceiver, TEST_KEY, type TestReceiver } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

/** Sends one signed GP delivery until it is accepted, as a sender retries a 503; returns the event id. */
async function deliver(receiver: TestReceiver): Promise<string> {
  const body = JSON.stringify({ serviceType: 'GPServer', jobId: `j${randomUUID()}`, events: [{ eventType: 'esriJobSucceeded' }] });
  const accepted = await waitFor(
    'the receiver to accept a delivery',
    async () => {
      const response = await receiver.post(body, { 'x-service': sign(TEST_KEY, body) }).catch(() => undefined);
      return response?.status === 202 && response;
    },
    { intervalMs: 50 },
  );
  return ((await accepted.json()) as { id: string }).id;
}

for (const crash of [false, true]) {
  t.test(`a subscription keeps consuming after Redis is ${crash ? 'killed' : 'stopped'} and restarted mid-stream`, async (t) => {
    const redis = await startRedis(t, { appendOnly: true });
    const receiver = await startReceiver(t, redis);
    const consumed = new Set<string>();
    const subscription = subscribe({
      connection: redis.url,
      prefix: receiver.prefix,
      logger: (await import('pino')).default({ level: 'silent' }),
      handlers: { 'gp.*': (event) => void consumed.add(event.id) },
    });
    t.teardown(() => subscription.close({ timeoutMs: 1000 }));

    const before: string[] = [];
    for (let n = 0; n < 10; n += 1) before.push(await deliver(receiver));
    await waitFor('the first events', async () => before.every((id) => consumed.has(id)));

    if (crash) await redis.kill();
    else await redis.stop();
    await new Promise((resolve) => setTimeout(resolve, 300)); // the outage
    await redis.start();

    const after: string[] = [];
    for (let n = 0; n < 10; n += 1) after.push(await deliver(receiver));
    await waitFor('the events sent after the restart', async () => after.every((id) => consumed.has(id)), { timeoutMs: 20_000 });
    t.equal(after.filter((id) => consumed.has(id)).length, 10, 'every event accepted after the restart was consumed');
  });
}
