import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import t from 'tap';
import { sign } from '../../src/signature/sign.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { fixture } from '../helpers/paths.js';
import { startReceiver, TEST_KEY } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const DASHBOARD_TOKEN = 'dashboard-token-0123456789abcdef';

/** Every value stored under `prefix` (strings, hashes, lists, sets, sorted sets, streams), as text. */
async function everythingStored(redis: Redis, prefix: string): Promise<string> {
  const parts: string[] = [];
  for (const key of await redis.keys(`${prefix}:*`)) {
    const type = await redis.type(key);
    if (type === 'string') parts.push((await redis.get(key)) ?? '');
    else if (type === 'hash') parts.push(JSON.stringify(await redis.hgetall(key)));
    else if (type === 'list') parts.push(JSON.stringify(await redis.lrange(key, 0, -1)));
    else if (type === 'set') parts.push(JSON.stringify(await redis.smembers(key)));
    else if (type === 'zset') parts.push(JSON.stringify(await redis.zrange(key, '0', '-1')));
    else if (type === 'stream') parts.push(JSON.stringify(await redis.xrange(key, '-', '+')));
  }
  return parts.join('\n');
}

t.test(
  'the signature key, the dashboard token and the signature values appear in no log line, metric, job, inbox entry, spool line or error body',
  async (t) => {
    const redis = await startRedis(t);
    const { logger: loggerInstance, lines } = capturingLogger();
    const spoolDir = t.testdir();
    const receiver = await startReceiver(t, redis, { DASHBOARD_TOKEN, SPOOL_DIR: spoolDir }, { loggerInstance });

    const json = fixture('enterprise-feature-created.json');
    const form = fixture('agol-form-signed.txt');
    const good = sign(TEST_KEY, json);
    const wrong = sign('attacker-key', json);
    const bodies: string[] = [];
    const post = async (body: Buffer | string, headers: Record<string, string>): Promise<number> => {
      const response = await receiver.post(body, headers);
      bodies.push(await response.text());
      return response.status;
    };
    t.equal(await post(json, { 'x-service': good }), 202);
    t.equal(await post(json, { 'x-service': wrong }), 401);
    t.equal(await post(json, { 'x-service': good.slice(0, -4) }), 401);
    t.equal(await post('{broken', { 'x-service': sign(TEST_KEY, '{broken') }), 400);
    t.equal(await post(form, { 'content-type': 'application/x-www-form-urlencoded' }), 202);
    const login = await fetch(`${receiver.url}/ui/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${DASHBOARD_TOKEN}x`,
      redirect: 'manual',
    });
    bodies.push(await login.text());
    t.equal(login.status, 401, 'a wrong dashboard token is refused');

    const client = new Redis(redis.url);
    t.teardown(() => client.disconnect());
    const storedBefore = await everythingStored(client, receiver.prefix);
    t.match(storedBefore, /FeaturesCreated/, 'the jobs are there to be searched');

    // One more accepted while Redis is down: it goes to the spool (the test Redis keeps nothing on restart).
    await redis.stop();
    const spooled = Buffer.from('{"serviceType":"GPServer","jobId":"spooled"}');
    t.equal(await post(spooled, { 'x-service': sign(TEST_KEY, spooled) }), 202);
    const spool = readdirSync(spoolDir)
      .map((name) => readFileSync(join(spoolDir, name), 'utf8'))
      .join('\n');
    t.match(spool, /spooled/, 'the spool holds the event');
    await redis.start();
    await waitFor('the spool drained into Redis', async () => readdirSync(spoolDir).length === 0 || undefined);

    const metrics = await (await fetch(`${receiver.url}/metrics`)).text();
    const stored = `${storedBefore}\n${await everythingStored(client, receiver.prefix)}`;
    t.match(stored, /spooled/, 'the spooled event is there too');

    const formSignature = decodeURIComponent(/x-esriHook-Signature=([^&]+)/i.exec(form.toString())![1]!);
    const secrets = {
      key: TEST_KEY,
      'dashboard token': DASHBOARD_TOKEN,
      'signature header value': good,
      'its digest': good.slice('sha256='.length),
      'a wrong signature': wrong.slice('sha256='.length),
      'the form signature field': formSignature.replace(/^sha256=/, ''),
    };
    const places = {
      logs: lines.join('\n'),
      metrics,
      'Redis (jobs, inbox, dedup keys)': stored,
      spool,
      'error and reply bodies': bodies.join('\n'),
    };
    for (const [place, text] of Object.entries(places)) {
      t.ok(text.length > 0, `${place}: something to search`);
      for (const [what, secret] of Object.entries(secrets)) t.notOk(text.includes(secret), `${place} do not contain the ${what}`);
    }
  },
);
