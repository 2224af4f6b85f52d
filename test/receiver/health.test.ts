import crypto from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
import t from 'tap';
import { sign } from '../../src/signature/sign.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { startReceiver, TEST_KEY } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';

const redis = await startRedis(t);

t.test('/healthz and /readyz answer 200 while Redis answers', async (t) => {
  const receiver = await startReceiver(t, redis);
  const health = await fetch(`${receiver.url}/healthz`);
  t.equal(health.status, 200);
  t.same(await health.json(), { status: 'ok' });
  const ready = await fetch(`${receiver.url}/readyz`);
  t.equal(ready.status, 200);
  t.same(await ready.json(), { status: 'ready' });
});

t.test('/readyz is 503 with the reason while a readiness check fails', async (t) => {
  let registered = false;
  const receiver = await startReceiver(t, redis, {}, { readinessChecks: [() => (registered ? undefined : 'registration pending')] });
  const pending = await fetch(`${receiver.url}/readyz`);
  t.equal(pending.status, 503);
  t.same(await pending.json(), { status: 'not ready', reason: 'registration pending' });
  registered = true;
  t.equal((await fetch(`${receiver.url}/readyz`)).status, 200);
});

t.test('/metrics counts deliveries by hook, outcome and status, verify failures, enqueue latency and queue depth', async (t) => {
  const receiver = await startReceiver(t, redis);
  const body = Buffer.from('{"serviceType":"GPServer","jobId":"m1","events":[{"eventType":"esriJobFailed"}]}');
  await receiver.post(body, { 'x-service': sign(TEST_KEY, body) });
  await receiver.post(body, { 'x-service': sign(TEST_KEY, body) });
  await receiver.post(body, { 'x-service': sign('wrong', body) });
  await receiver.post(body, {}, 'no-such-hook');
  const response = await fetch(`${receiver.url}/metrics`);
  t.equal(response.status, 200);
  t.match(response.headers.get('content-type'), /^text\/plain/);
  const text = await response.text();
  t.match(text, /geohook_deliveries_total\{hook="default",outcome="accepted",status="202"\} 1/);
  t.match(text, /geohook_deliveries_total\{hook="default",outcome="duplicate",status="202"\} 1/);
  t.match(text, /geohook_deliveries_total\{hook="default",outcome="rejected",status="401"\} 1/);
  t.match(
    text,
    /geohook_deliveries_total\{hook="\(unknown\)",outcome="rejected",status="404"\} 1/,
    'unknown hook names do not become labels',
  );
  t.match(text, /geohook_signature_failures_total\{hook="default",reason="GEOHOOK_ERR_BAD_SIGNATURE"\} 1/);
  t.match(text, /geohook_enqueue_duration_seconds_count\{queue="gp-events"\} 2/);
  t.match(text, /geohook_queue_depth\{queue="gp-events"\} 1/);
  t.match(text, /geohook_process_resident_memory_bytes/);
  t.notOk(text.includes('no-such-hook'));
});

t.test('with METRICS_TOKEN, /metrics needs Authorization: Bearer <token>, compared in constant time; health stays open (I2)', async (t) => {
  const token = 'metrics-token-0123456789abcdef';
  const { logger: loggerInstance, lines } = capturingLogger();
  const receiver = await startReceiver(t, redis, { METRICS_TOKEN: token }, { loggerInstance });
  for (const [name, authorization] of [
    ['none', undefined],
    ['a wrong token', `Bearer ${token}x`],
    ['a prefix of it', `Bearer ${token.slice(0, -1)}`],
    ['as basic auth', `Basic ${Buffer.from(`metrics:${token}`).toString('base64')}`],
    ['without the scheme', token],
  ] as const) {
    const refused = await fetch(`${receiver.url}/metrics`, { headers: authorization === undefined ? {} : { authorization } });
    t.equal(refused.status, 401, name);
    t.equal(refused.headers.get('www-authenticate'), 'Bearer realm="geohook-metrics"');
    t.match(await refused.json(), { statusCode: 401, code: 'GEOHOOK_ERR_METRICS_AUTH' });
  }
  const comparisons: number[][] = [];
  const original = crypto.timingSafeEqual;
  crypto.timingSafeEqual = (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
    comparisons.push([a.byteLength, b.byteLength]);
    return original(a, b);
  };
  syncBuiltinESMExports();
  try {
    const allowed = await fetch(`${receiver.url}/metrics`, { headers: { authorization: `bearer ${token}` } });
    t.equal(allowed.status, 200, 'the token opens it (the scheme in any case)');
    t.match(await allowed.text(), /^# TYPE geohook_deliveries_total counter$/m);
  } finally {
    crypto.timingSafeEqual = original;
    syncBuiltinESMExports();
  }
  t.same(comparisons, [[32, 32]], 'compared once, as two SHA-256 digests');
  for (const path of ['/healthz', '/readyz']) t.equal((await fetch(`${receiver.url}${path}`)).status, 200, `${path} needs no token`);
  t.notOk(lines.join('\n').includes(token), 'the token reaches no log line');
});

t.test('without METRICS_TOKEN, /metrics is open', async (t) => {
  const receiver = await startReceiver(t, redis);
  const open = await fetch(`${receiver.url}/metrics`);
  t.equal(open.status, 200);
  t.match(await open.text(), /^# TYPE geohook_deliveries_total counter$/m);
});
