import { createHash } from 'node:crypto';
import t from 'tap';
import { sign } from '../../src/signature/sign.js';
import { eventOf } from '../helpers/envelope.js';
import { fixture } from '../helpers/paths.js';
import { startReceiver, TEST_KEY } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';

const redis = await startRedis(t);

t.test('a signed Enterprise feature delivery is acknowledged 202 and enqueued on feature-events', async (t) => {
  const receiver = await startReceiver(t, redis);
  const body = fixture('enterprise-feature-created.json');
  const response = await receiver.post(body, { 'x-service': sign(TEST_KEY, body) });
  t.equal(response.status, 202);
  const id = createHash('sha256').update(body).digest('hex');
  t.same(await response.json(), { status: 'accepted', id, duplicate: false });

  const job = await receiver.app.eventQueue.queue('feature-events').getJob(id);
  t.ok(job, 'the job is in Redis');
  t.equal(job!.name, 'feature.FeaturesCreated');
  t.match(job!.data, {
    id,
    hook: 'default',
    type: 'feature.FeaturesCreated',
    types: ['feature.FeaturesCreated'],
    family: 'feature',
    service: { serviceName: 'ServiceName', serviceType: 'FeatureServer' },
    contentType: 'application/json',
    verified: true,
    bodyEncoding: 'utf8',
    body: body.toString(),
  });
  t.notOk('payload' in job!.data, 'a JSON payload is not stored twice: it is the body');
  t.match(eventOf(job!), {
    payload: { name: 'Webhook Name', events: [{ eventType: 'FeaturesCreated' }] },
    rawBody: body.toString('base64'),
  });
});
