import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import t from 'tap';
import { findFreePort } from '../../src/embedded/redis-server.js';
import { backfillQueueName } from '../../src/queue/names.js';
import { aheadKey, watermarksKey } from '../../src/redis/keys.js';
import { sign } from '../../src/signature/sign.js';
import { editParcels, PARCELS } from '../helpers/edits.js';
import { startEmulator } from '../helpers/emulator.js';
import { registrationEnv, startGeohook } from '../helpers/geohook.js';
import { uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

// Issue 51 (security review 2, N3): a leaked hook key must not turn geohook into an amplifier against the GIS server.
t.setTimeout(3 * 60_000);

const KEY = 'amplifier-test-hook-key-AAAAAAAAAAAA';
const INVENTED = 50;

const redis = await startRedis(t);

/** Warning lines (pino level 40) among `lines`, counted by message. */
function warningsByMessage(lines: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of lines) {
    const entry = JSON.parse(line) as { level: number; msg: string };
    if (entry.level === 40) counts.set(entry.msg, (counts.get(entry.msg) ?? 0) + 1);
  }
  return counts;
}

t.test(
  'issue 51: signed deliveries for invented services cost the GIS server no read, and one warning per cause; a real edit is still confirmed',
  async (t) => {
    const emulator = await startEmulator(t);
    const prefix = uniquePrefix();
    const env = { ...registrationEnv(emulator, [PARCELS], prefix), HOOK_SECRETS: KEY, PORT: String(await findFreePort()) };
    const geohook = await startGeohook(t, redis, env);
    await waitFor('registered', async () => (await geohook.readyz()).status === 200);
    const raw = new Redis(redis.url);
    t.teardown(() => raw.disconnect());
    const backfill = new Queue(backfillQueueName, { connection: raw, prefix });
    t.teardown(() => backfill.close());
    const scope = `default ${PARCELS}`;
    const first = await editParcels(emulator, 'FeaturesCreated');
    await waitFor('the first real edit confirmed', async () => Number(await raw.hget(watermarksKey(prefix), scope)) === first);

    const logFrom = geohook.log().split('\n').length;
    const requestsFrom = emulator.requests.length;
    for (let i = 0; i < INVENTED; i += 1) {
      const body = JSON.stringify({
        serviceType: 'FeatureServer',
        changesUrl: `${emulator.url}/arcgis/rest/services/Hosted/Inv${i}/FeatureServer/extractChanges?serverGens=[1,2]`,
        name: 'geohook',
        folderName: 'Hosted',
        serviceName: `Inv${i}`,
        events: [{ eventType: 'FeaturesCreated', when: i }],
      });
      const response = await fetch(`${geohook.url}/webhooks/default`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-esriHook-Signature': sign(KEY, body) },
        body,
      });
      t.equal(response.status, 202, `invented service ${i} accepted`);
    }

    // A real edit on the registered service, made after the flood: its range is confirmed, not starved.
    const real = await editParcels(emulator, 'FeaturesUpdated');
    await waitFor('the real edit confirmed', async () => Number(await raw.hget(watermarksKey(prefix), scope)) === real, {
      timeoutMs: 30_000,
    });
    // Nothing left that could still read: no range waiting, no confirm job pending.
    await waitFor(
      'every invented range settled',
      async () => {
        const counts = await backfill.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
        return (await raw.hlen(aheadKey(prefix))) === 0 && Object.values(counts).every((count) => count === 0);
      },
      { timeoutMs: 90_000 },
    );

    const requests = emulator.requests.slice(requestsFrom);
    t.same(
      requests.filter((request) => request.includes('/Inv')),
      [],
      'no request for an invented service',
    );
    t.ok(requests.filter((request) => request.includes('findServices')).length <= 1, 'at most one catalogue read');
    const lines = geohook.log().split('\n').slice(logFrom).filter(Boolean);
    const warnings = warningsByMessage(lines);
    for (const [message, count] of warnings) t.ok(count <= 1, `one warning per cause: ${count} × "${message}"`);
    t.ok(
      lines.some((line) => line.includes('"level":40') && line.includes('Inv')),
      'the invented services were warned about',
    );
  },
);
