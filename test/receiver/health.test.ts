import t from 'tap';
import { sign } from '../../src/signature/sign.js';
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
