import { monitorEventLoopDelay } from 'node:perf_hooks';
import t from 'tap';
import { sign } from '../../src/signature/sign.js';
import { countJobs, startReceiver, TEST_KEY } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';

const redis = await startRedis(t);
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const arrays = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const objects = (depth: number, leaf = '1'): string => `${'{"a":'.repeat(depth)}${leaf}${'}'.repeat(depth)}`;

/** Signed with a header, each within the 1 MiB limit: [name, body, extra headers]. */
const hostile: Array<[string, string, Record<string, string>]> = [
  ['100,000 nested arrays', arrays(100_000), {}],
  ['100,000 nested objects', objects(100_000), {}],
  ['100,000 nested objects ending in __proto__', objects(100_000, '{"__proto__":{"polluted":true}}'), {}],
  ['a form field holding 100,000 nested arrays', `payload=${encodeURIComponent(arrays(100_000))}`, FORM],
  ['1,000 form fields each nested 400 deep', Array.from({ length: 1000 }, (_, i) => `f${i}=${arrays(400)}`).join('&'), FORM],
  ['100,000 form fields of one name', Array(100_000).fill('a=1').join('&'), FORM],
];

t.test('hostile bodies are refused 400 without blocking the event loop, and the receiver keeps accepting', async (t) => {
  const receiver = await startReceiver(t, redis);
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  for (const [name, body, headers] of hostile) {
    const response = await receiver.post(body, { ...headers, 'x-service': sign(TEST_KEY, body) });
    t.equal(response.status, 400, name);
    t.match(await response.json(), { code: 'GEOHOOK_ERR_BAD_PAYLOAD' }, name);
  }
  delay.disable();
  t.ok(delay.max / 1e6 < 2000, `the event loop was never blocked more than ${Math.round(delay.max / 1e6)} ms`);
  const fine = JSON.stringify({ serviceType: 'GPServer', jobId: 'after', events: [{ eventType: 'esriJobSucceeded' }] });
  t.equal((await receiver.post(fine, { 'x-service': sign(TEST_KEY, fine) })).status, 202, 'a normal delivery afterwards is accepted');
  t.equal(await countJobs(receiver.app), 1, 'none of the hostile ones was stored');
});

t.test('a form-signed delivery (signature in a field) whose payload nests 100,000 deep is refused 400 once verified', async (t) => {
  const receiver = await startReceiver(t, redis);
  const payload = arrays(100_000);
  const body = (key: string): string =>
    `payload=${encodeURIComponent(payload)}&x-esriHook-Signature=${encodeURIComponent(sign(key, payload))}`;
  const refused = await receiver.post(body(TEST_KEY), FORM);
  t.equal(refused.status, 400);
  t.match(await refused.json(), { code: 'GEOHOOK_ERR_BAD_PAYLOAD', message: /deeper than 64 levels/ });
  t.equal((await receiver.post(body('another-key'), FORM)).status, 401, 'a forged one is refused for its signature');
});
