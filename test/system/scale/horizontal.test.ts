import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import t, { type Test } from 'tap';
import { findFreePort } from '../../../src/embedded/redis-server.js';
import { sign } from '../../../src/signature/sign.js';
import { startCli } from '../../helpers/cli.js';
import { startEmulator } from '../../helpers/emulator.js';
import { registrationEnv, webhooksOf } from '../../helpers/geohook.js';
import { TEST_KEY, uniquePrefix } from '../../helpers/receiver.js';
import { startRedis } from '../../helpers/redis.js';
import { waitFor } from '../../helpers/wait.js';

const RECEIVERS = 3;
const CONSUMERS = 2;
const DELIVERIES = 300;

function stop(t: Test, child: ChildProcess): void {
  t.teardown(() => {
    child.kill('SIGKILL');
  });
}

/** Event ids a `geohook consume` printed, one per JSON line. */
const printedIds = (output: string): string[] =>
  output
    .split('\n')
    .filter((line) => line.startsWith('{"id":'))
    .map((line) => (JSON.parse(line) as { id: string }).id);

t.test(
  `${RECEIVERS} receiver processes and ${CONSUMERS} consumers on one Redis: registered once, every event consumed exactly once, metrics per process`,
  async (t) => {
    const redis = await startRedis(t);
    const emulator = await startEmulator(t);
    const prefix = uniquePrefix();
    const ports = await Promise.all(Array.from({ length: RECEIVERS }, () => findFreePort()));
    const urls = ports.map((port) => `http://127.0.0.1:${port}`);
    // The replicas sit behind one address as far as the GIS server knows: the first one's stands for it.
    const env = {
      ...registrationEnv(emulator, ['Tools/Buffer.GPServer'], prefix),
      REDIS_URL: redis.url,
      HOOK_SECRETS: TEST_KEY,
      PUBLIC_URL: urls[0]!,
    };
    await Promise.all(
      ports.map(async (port) => {
        const { child } = await startCli(['serve', '--port', String(port), '--host', '127.0.0.1'], env, /Server listening/);
        stop(t, child);
      }),
    );
    for (const url of urls)
      await waitFor(`${url} ready (registration done)`, async () => ((await fetch(`${url}/readyz`)).status === 200 ? true : undefined));
    t.equal((await webhooksOf(emulator, 'Tools/Buffer.GPServer')).length, 1, 'one webhook, registered once by the three replicas');

    const consumers = await Promise.all(
      Array.from({ length: CONSUMERS }, async () => {
        const consumer = await startCli(['consume', '--prefix', prefix], { REDIS_URL: redis.url }, /"msg":"consuming/);
        stop(t, consumer.child);
        return consumer;
      }),
    );

    const sent: string[] = [];
    await Promise.all(
      Array.from({ length: DELIVERIES }, async (_, n) => {
        const body = JSON.stringify({ serviceType: 'GPServer', jobId: `scale-${n}`, events: [{ eventType: 'esriJobSucceeded' }] });
        const response = await fetch(`${urls[n % RECEIVERS]}/webhooks/default`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-service': sign(TEST_KEY, body) },
          body,
        });
        t.equal(response.status, 202, `delivery ${n}`);
        sent.push(((await response.json()) as { id: string }).id);
      }),
    );
    const consumed = (): string[] => consumers.flatMap((consumer) => printedIds(consumer.output()));
    await waitFor('every event consumed', async () => new Set(consumed()).size === DELIVERIES || undefined, { timeoutMs: 30_000 });
    // The consumers end and all they printed is read: a repeat would be among it.
    await Promise.all(
      consumers.map(async ({ child }) => {
        const closed = once(child, 'close');
        child.kill('SIGTERM');
        await closed;
      }),
    );
    t.equal(consumed().length, DELIVERIES, 'exactly once: no event printed twice');
    t.same([...new Set(consumed())].sort(), [...sent].sort(), 'every acknowledged event');
    for (const [index, consumer] of consumers.entries())
      t.ok(printedIds(consumer.output()).length > 0, `consumer ${index + 1} took a share`);

    for (const url of urls) {
      const metrics = await (await fetch(`${url}/metrics`)).text();
      t.match(
        metrics,
        new RegExp(`^geohook_deliveries_total\\{hook="default",outcome="accepted",status="202"\\} ${DELIVERIES / RECEIVERS}$`, 'm'),
        `${url} counts its own deliveries`,
      );
    }
  },
);
