import { once } from 'node:events';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { changeEventsQueueName } from '../../../src/changes/change-event.js';
import { readChangesStatus } from '../../../src/changes/changes-status.js';
import { findFreePort } from '../../../src/embedded/redis-server.js';
import { startCli } from '../../helpers/cli.js';
import { PARCELS } from '../../helpers/edits.js';
import { startEmulator } from '../../helpers/emulator.js';
import { registrationEnv } from '../../helpers/geohook.js';
import { uniquePrefix } from '../../helpers/receiver.js';
import { startRedis } from '../../helpers/redis.js';
import { waitFor } from '../../helpers/wait.js';

// Processes on a loaded two-core machine: a killed resolver's range is taken again once its lock lapses (about 15 s).
t.setTimeout(3 * 60_000);

const redis = await startRedis(t);

async function serve(t: Test, env: Record<string, string>, port: number) {
  const started = await startCli(['serve', '--host', '127.0.0.1', '--port', String(port)], env, /Server listening/);
  t.teardown(() => {
    started.child.kill('SIGKILL');
  });
  return started;
}

t.test(
  'geohook serve SIGKILLed while it resolves a 20,000-add generation: the next one writes the rest, no change event twice',
  async (t) => {
    const emulator = await startEmulator(t);
    const prefix = uniquePrefix();
    const port = await findFreePort();
    const env = { ...registrationEnv(emulator, [PARCELS], prefix), REDIS_URL: redis.url, CHANGES: PARCELS };
    const readyz = async (): Promise<number> => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => ({ status: 0 }))).status;
    const first = await serve(t, env, port);
    await waitFor('following', async () => (await readyz()) === 200);
    const raw = new Redis(redis.url, { maxRetriesPerRequest: null });
    const queue = new Queue(changeEventsQueueName, { connection: raw, prefix });
    t.teardown(async () => {
      await queue.close();
      raw.disconnect();
    });
    const written = async (): Promise<number> => (await queue.getJobCounts('waiting')).waiting!;

    const total = 20_000;
    const bulk = await emulator.control('services/Hosted/Parcels.FeatureServer/bulk', { layerId: 0, count: total });
    t.equal(bulk.status, 200);
    const before = await waitFor(
      'the first batches written',
      async () => {
        const count = await written();
        return count > 0 && count;
      },
      { intervalMs: 5 },
    );
    first.child.kill('SIGKILL');
    await once(first.child, 'exit');
    const atKill = await written();
    t.ok(atKill < total, `killed mid-range: ${atKill} of ${total} written (first seen ${before})`);

    await serve(t, env, port);
    await waitFor('every change event', async () => (await written()) >= total, { timeoutMs: 120_000 });
    // A later edit: the scope resolves one range at a time, so once its range is resolved and released, the
    // 20,000-add range was done before it, and anything it wrote is in the queue.
    const later = await emulator.control('services/Hosted/Parcels.FeatureServer/applyEdits', {
      edits: [{ id: 0, adds: [{ attributes: { parcel_id: 'later' } }] }],
    });
    const laterGen = later.body.serverGen as number;
    const status = async () => (await readChangesStatus(raw, prefix)).services[0]?.scopes[0];
    await waitFor("the later edit's range resolved", async () => {
      const scope = await status();
      return scope !== undefined && scope.resolvedGen >= laterGen && scope.pending === undefined;
    });
    t.equal(await written(), total + 1, 'each feature once: no more, no fewer');
    const ids = new Set<string>();
    for (let start = 0; start <= total; start += 5000) {
      for (const job of await queue.getJobs(['waiting'], start, start + 4999)) ids.add(String(job.data.key.objectId));
    }
    t.equal(ids.size, total + 1, 'every object id, each once');
    t.ok(ids.has(String(total + 1)), "the later edit's event is there");
  },
);
