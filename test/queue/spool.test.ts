import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import t from 'tap';
import { loadConfig } from '../../src/config/load-config.js';
import { EventSpool } from '../../src/queue/spool.js';
import { aheadKey } from '../../src/redis/keys.js';
import { startServer } from '../../src/server.js';
import { sign } from '../../src/signature/sign.js';
import { accepted, envelopeOf, eventOf } from '../helpers/envelope.js';
import { countJobs, startReceiver, TEST_KEY } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const delivery = (n: number): Buffer =>
  Buffer.from(JSON.stringify({ serviceType: 'GPServer', jobId: `s${n}`, n, events: [{ eventType: 'esriJobSucceeded' }] }));
const signed = (body: Buffer): Record<string, string> => ({ 'x-service': sign(TEST_KEY, body) });

t.test('while Redis is down deliveries are spooled and acknowledged, then stored in order when it returns', async (t) => {
  const redis = await startRedis(t);
  const spoolDir = t.testdir();
  const receiver = await startReceiver(t, redis, { SPOOL_DIR: spoolDir });
  t.equal((await receiver.post(delivery(0), signed(delivery(0)))).status, 202, 'stored in Redis while it is up');
  await redis.stop();
  for (let n = 1; n <= 20; n += 1) {
    const response = await receiver.post(delivery(n), signed(delivery(n)));
    t.equal(response.status, 202, `delivery ${n} acknowledged while Redis is down`);
  }
  const files = readdirSync(spoolDir);
  t.equal(files.length, 1, 'one spool file');
  const lines = readFileSync(join(spoolDir, files[0]!), 'utf8').trim().split('\n');
  t.same(
    lines.map((line) => (eventOf({ data: (JSON.parse(line) as { event: unknown }).event }).payload as { n: number }).n),
    Array.from({ length: 20 }, (_, i) => i + 1),
    "in arrival order, fsync'd",
  );

  await redis.start();
  await waitFor('the spool drained', async () => readdirSync(spoolDir).length === 0 || undefined);
  t.equal(await countJobs(receiver.app), 20, 'every spooled event is a job (the restarted Redis kept nothing of before)');
  const jobs = await receiver.app.eventQueue.queue('gp-events').getJobs(['wait'], 0, -1, true);
  t.same(
    jobs.map((job) => (eventOf(job).payload as { n: number }).n),
    Array.from({ length: 20 }, (_, i) => i + 1),
    'queued in the order they arrived',
  );
  const again = await receiver.post(delivery(5), signed(delivery(5)));
  t.match(await again.json(), { duplicate: true }, 'a spooled event repeated after the drain is a duplicate');
});

t.test('a spooled feature delivery keeps its range of server generations: drained, the range waits for its server', async (t) => {
  const redis = await startRedis(t);
  const spoolDir = t.testdir();
  const receiver = await startReceiver(t, redis, { SPOOL_DIR: spoolDir, TRUSTED_ORIGINS: 'https://gis.example.com' });
  const body = Buffer.from(
    JSON.stringify({
      serviceType: 'FeatureServer',
      changesUrl: 'https://gis.example.com/server/rest/services/Hosted/Parcels/FeatureServer/extractChanges?serverGens=[5,6]',
      folderName: 'Hosted',
      serviceName: 'Parcels',
      events: [{ eventType: 'FeaturesCreated', when: 1 }],
    }),
  );
  await redis.stop();
  t.equal((await receiver.post(body, signed(body))).status, 202, 'spooled');
  await redis.start();
  await waitFor('the spool drained', async () => readdirSync(spoolDir).length === 0 || undefined);
  const client = new Redis(redis.url);
  t.teardown(() => client.disconnect());
  t.match(await client.hget(aheadKey(receiver.prefix), 'default Hosted/Parcels.FeatureServer'), /^5\t6\thttps:\/\/gis\.example\.com\//);
});

t.test('a spool left by an earlier run is drained at start; a torn last line (never acknowledged) is skipped', async (t) => {
  const redis = await startRedis(t);
  const spoolDir = t.testdir();
  const [first, second] = [envelopeOf('gp'), envelopeOf('feature')];
  // A line as the spool writes it, and one of its earlier format (the stored event alone).
  const lines = [`{"ranges":[],"activity":null,"event":${JSON.stringify(first)}}`, JSON.stringify(second), '{"id":"torn'];
  writeFileSync(join(spoolDir, 'spool-1700000000000-000001.jsonl'), lines.join('\n'));
  // Not a spool file: left alone.
  writeFileSync(join(spoolDir, 'notes.txt'), 'keep me');
  const receiver = await startReceiver(t, redis, { SPOOL_DIR: spoolDir });
  await waitFor('the spool drained', async () => readdirSync(spoolDir).length === 1 || undefined);
  t.same(readdirSync(spoolDir), ['notes.txt']);
  t.equal(await countJobs(receiver.app), 2);
  t.same((await receiver.app.eventQueue.queue('gp-events').getJob(first.id))?.data, first);
  t.same((await receiver.app.eventQueue.queue('feature-events').getJob(second.id))?.data, second);
});

t.test('the spool directory is created readable by its owner only (0700), and its files are 0600', async (t) => {
  const umask = process.umask(0o022); // the usual umask, under which files would be 0644
  t.teardown(() => process.umask(umask));
  const dir = join(t.testdir(), 'data', 'spool');
  const spool = new EventSpool({ dir });
  const event = envelopeOf('gp');
  await spool.append(accepted(event), JSON.stringify(event));
  await spool.close();
  t.equal(statSync(dir).mode & 0o777, 0o700, 'the directory');
  const files = readdirSync(dir);
  t.equal(files.length, 1);
  t.equal(statSync(join(dir, files[0]!)).mode & 0o777, 0o600, 'the spool file');
});

t.test('a SPOOL_DIR that is a file stops start-up naming it and the fix, and leaves no connection to Redis open', async (t) => {
  const redis = await startRedis(t);
  const file = join(t.testdir(), 'not-a-directory');
  writeFileSync(file, '');
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    REDIS_URL: redis.url,
    HOOK_SECRETS: TEST_KEY,
    SPOOL_DIR: file,
    LOG_LEVEL: 'silent',
  });
  await t.rejects(startServer(config), {
    code: 'GEOHOOK_ERR_CONFIG',
    message: new RegExp(`^SPOOL_DIR \\(${file}\\) cannot be used.*Give a directory`),
  });
  const admin = new Redis(redis.url);
  t.teardown(() => admin.disconnect());
  await waitFor(
    'only this test connected to Redis',
    async () =>
      String(await admin.client('LIST'))
        .trim()
        .split('\n').length === 1,
  );
  t.pass("the server's connection was closed");
});
