import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import t from 'tap';
import { changeEventsQueueName } from '../../src/changes/change-event.js';
import { layerFieldsField } from '../../src/changes/layer-fields.js';
import { queueNames } from '../../src/queue/names.js';
import { layerFieldsKey } from '../../src/redis/keys.js';
import type { RelayDryRun } from '../../src/relay/dry-run.js';
import { runCli } from '../helpers/cli.js';
import { startSink } from '../helpers/http-sink.js';
import { uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { changeUpdated, SECRET_A, storedFeatureEvent } from '../helpers/relay-events.js';

const redis = await startRedis(t);
// Thirteen runs of the command line, each a Node process of its own: more than a minute on a loaded machine.
t.setTimeout(3 * 60_000);

t.test('issue 54: geohook relay test prints the verdict and why, the body and the headers, and sends nothing', async (t) => {
  const sink = await startSink(t, (_request, response) => response.writeHead(204).end());
  const prefix = uniquePrefix();
  const relays = [
    {
      name: 'closed',
      url: sink.url,
      types: ['change.*'],
      where: "status = 'Closed'",
      secret: SECRET_A,
      headers: { Authorization: 'Bearer not-for-your-eyes' },
      transform: '{"parcel": after.attributes.parcel_id, "status": after.attributes.status}',
    },
    {
      name: 'flow',
      url: sink.url,
      types: ['change.updated'],
      format: 'powerautomate',
      secret: 'a-shared-secret-of-24ch',
      transform: 'after.attributes.status = "Bad" ? $error("status Bad is not sent") : {"status": after.attributes.status}',
    },
  ];
  const closed = changeUpdated({ id: 'closed1', after: { attributes: { objectid: 1, parcel_id: 'P-1', status: 'Closed' } } });
  const open = changeUpdated({ id: 'open1', after: { attributes: { objectid: 2, parcel_id: 'P-2', status: 'Open' } } });
  const bad = changeUpdated({ id: 'bad1', after: { attributes: { objectid: 3, status: 'Bad' } } });
  const dir = t.testdir({
    'geohook.json': JSON.stringify({ relays }),
    'open.json': JSON.stringify(open),
    'bad.json': JSON.stringify(bad),
    'not.json': '{"id": 1',
    'other.json': '{"a": 1}',
  });
  const env = { REDIS_URL: redis.url, GEOHOOK_PREFIX: prefix, GEOHOOK_CONFIG: join(dir, 'geohook.json') };
  const feature = storedFeatureEvent();
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  t.teardown(() => connection.disconnect());
  const changes = new Queue(changeEventsQueueName, { connection, prefix });
  await changes.add(closed.type, closed, { jobId: closed.id });
  await changes.close();
  const features = new Queue(queueNames.feature, { connection, prefix });
  await features.add(feature.type, feature, { jobId: feature.id });
  await features.close();
  const fields = [
    { name: 'objectid', type: 'esriFieldTypeOID' },
    { name: 'parcel_id', type: 'esriFieldTypeString' },
    { name: 'status', type: 'esriFieldTypeString' },
  ];
  await connection.hset(layerFieldsKey(prefix), layerFieldsField(closed), JSON.stringify(fields));

  const dryRun = async (...args: string[]) => {
    const result = await runCli(['relay', 'test', ...args], { env });
    return { ...result, json: result.stdout === '' ? undefined : (JSON.parse(result.stdout) as RelayDryRun) };
  };

  const taken = await dryRun('--route', 'closed', '--id', closed.id, '--json');
  t.equal(taken.code, 0, taken.stderr);
  t.match(taken.json, {
    route: 'closed',
    event: { id: 'closed1', type: 'change.updated' },
    matches: true,
    why: `takes it: types change.* take change.updated; where "status = 'Closed'" holds`,
    body: { parcel: 'P-1', status: 'Closed' },
    headers: {
      'content-type': 'application/json',
      'webhook-id': 'closed1',
      'webhook-signature': 'v1,(redacted)',
      authorization: '(redacted)',
    },
  });
  t.match(taken.json?.headers['webhook-timestamp'], /^\d+$/);
  t.notMatch(taken.stdout, /not-for-your-eyes/, 'no credential of the route is shown');

  const left = await dryRun('--route', 'closed', '--file', join(dir, 'open.json'), '--json');
  t.equal(left.code, 0, left.stderr);
  t.match(left.json, { matches: false, why: `does not take it: where "status = 'Closed'" does not hold`, body: { status: 'Open' } });

  const other = await dryRun('--route', 'flow', '--id', feature.id, '--json');
  t.match(other.json, { matches: false, why: 'does not take it: feature.FeaturesEdited is none of its types (change.updated)' });

  const failing = await dryRun('--route', 'flow', '--file', join(dir, 'bad.json'), '--json');
  t.equal(failing.code, 1, 'a transform that fails on the event: exit 1');
  t.match(failing.json, {
    matches: true,
    body: null,
    error: /^GEOHOOK_ERR_RELAY_TRANSFORM: route "flow": the transform failed on event bad1: it threw: status Bad is not sent/,
  });
  const flow = await dryRun('--route', 'flow', '--file', join(dir, 'open.json'), '--json');
  t.match(flow.json, { matches: true, body: { status: 'Open' }, headers: { 'x-geohook-secret': '(redacted)', 'webhook-id': 'open1' } });

  const human = await runCli(['relay', 'test', '--route', 'closed', '--id', closed.id], { env });
  t.equal(human.code, 0, human.stderr);
  t.match(human.stdout, /^route closed, event closed1 \(change\.updated\): takes it: .*\nheaders:\n {2}authorization: \(redacted\)\n/);
  t.match(human.stdout, /\nbody:\n\{\n {2}"parcel": "P-1",\n {2}"status": "Closed"\n\}\n$/);

  const refusals: [string[], RegExp][] = [
    [['--route', 'nope', '--id', 'x'], /geohook: no route "nope" in GEOHOOK_CONFIG's relays \(it has closed, flow\)/],
    [['--route', 'closed', '--id', 'gone'], /geohook: no event gone is kept in relay-closed, change-events or the event queues/],
    [['--route', 'closed'], /geohook: relay test: give the event with --id ID or with --file F, one of them/],
    [['--route', 'flow', '--file', join(dir, 'not.json')], /geohook: relay test --file .*not\.json: not JSON/],
    [['--route', 'flow', '--file', join(dir, 'other.json')], /geohook: relay test --file .*other\.json: no event/],
    [['--route', 'flow', '--file', join(dir, 'missing.json')], /geohook: relay test --file .*missing\.json: cannot read it \(ENOENT\)/],
  ];
  const refused = await Promise.all(refusals.map(([args]) => runCli(['relay', 'test', ...args], { env })));
  refusals.forEach(([args, message], index) => {
    t.equal(refused[index]!.code, 1, args.join(' '));
    t.match(refused[index]!.stderr, message);
  });
  t.equal(sink.received.length, 0, 'nothing was sent');
});
