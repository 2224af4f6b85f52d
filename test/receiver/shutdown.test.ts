import { type ClientRequest, request } from 'node:http';
import t from 'tap';
import { sign } from '../../src/signature/sign.js';
import { startReceiver, TEST_KEY } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';

t.test('closing the receiver finishes an in-flight delivery, then refuses new connections', async (t) => {
  const redis = await startRedis(t);
  const receiver = await startReceiver(t, redis);
  const body = Buffer.from(JSON.stringify({ serviceType: 'GPServer', jobId: 'j1', events: [{ eventType: 'esriJobSucceeded' }] }));
  const { port } = new URL(receiver.url);

  const arrived = new Promise((resolve) => receiver.app.server.once('request', resolve));
  let req!: ClientRequest;
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/webhooks/default',
        headers: { 'content-type': 'application/json', 'content-length': body.length, 'x-service': sign(TEST_KEY, body) },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.write(body.subarray(0, 10));
  });

  await arrived;
  const closed = receiver.app.close();
  // The rest of the body arrives after the shutdown began.
  req.end(body.subarray(10));
  const { status, body: text } = await answer;
  await closed;
  t.equal(status, 202, 'the in-flight delivery was acknowledged');
  t.match(JSON.parse(text), { status: 'accepted', duplicate: false });

  await t.rejects(fetch(`${receiver.url}/healthz`), 'no new connection is accepted after close');

  const { Queue } = await import('bullmq');
  const queue = new Queue('gp-events', { connection: { host: '127.0.0.1', port: redis.port }, prefix: receiver.prefix });
  t.teardown(() => queue.close());
  t.equal(await queue.getWaitingCount(), 1, 'the acknowledged event is in Redis');
});
