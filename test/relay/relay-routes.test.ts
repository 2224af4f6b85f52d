import type { IncomingHttpHeaders } from 'node:http';
import { applyEdits } from '@esri/arcgis-rest-feature-service';
import { ApiKeyManager } from '@esri/arcgis-rest-request';
import { Ajv } from 'ajv';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import t, { type Test } from 'tap';
import { parseWebhookSecret } from '../../src/config/relay-secrets.js';
import { formatStandard } from '../../src/relay/formats/standard.js';
import { relayQueueName } from '../../src/relay/relay-queues.js';
import { sign } from '../../src/signature/sign.js';
import { consumeChanges } from '../helpers/change-consumer.js';
import { PARCELS } from '../helpers/edits.js';
import { startEmulator } from '../helpers/emulator.js';
import { registrationEnv, startGeohook } from '../helpers/geohook.js';
import { startSink, type ReceivedRequest } from '../helpers/http-sink.js';
import { fixture } from '../helpers/paths.js';
import { configFile, uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { SECRET_A, SECRET_B } from '../helpers/relay-events.js';
import { waitFor } from '../helpers/wait.js';

const redis = await startRedis(t);

const schema = (name: string): object => JSON.parse(fixture(`relay/${name}`).toString('utf8')) as object;
const ajv = new Ajv({ allErrors: true, strict: false });
ajv.addSchema(schema('adaptive-card-1.4.schema.json'));
const validTeams = ajv.compile(schema('teams-workflow-message.schema.json'));
const validSlack = ajv.compile(schema('slack-message.schema.json'));

/** The headers of a received request as the verifiers take them (single values). */
const headersOf = (headers: IncomingHttpHeaders): Record<string, string> =>
  Object.fromEntries(Object.entries(headers).flatMap(([name, value]) => (typeof value === 'string' ? [[name, value]] : [])));

/** A sink that answers 204 to what `verify` accepts and 401 to the rest, the ids it accepted and what `verify` read of them. */
async function verifyingSink(t: Test, verify: (body: string, headers: Record<string, string>) => unknown) {
  const accepted: string[] = [];
  const verified: unknown[] = [];
  const sink = await startSink(t, (request, response, body) => {
    try {
      verified.push(verify(body.toString('utf8'), headersOf(request.headers)));
      accepted.push(String(request.headers['webhook-id']));
      response.writeHead(204).end();
    } catch {
      response.writeHead(401).end();
    }
  });
  return { ...sink, accepted, verified };
}

const square = (x: number) => ({
  rings: [
    [
      [x, 0],
      [x, 50],
      [x + 50, 50],
      [x + 50, 0],
      [x, 0],
    ],
  ],
  spatialReference: { wkid: 102100 },
});

t.test('relay routes: signed for both verifiers, filtered by where and changed, cards the schemas accept', async (t) => {
  const standard = new StandardWebhook(SECRET_A);
  const svix = new SvixWebhook(SECRET_B);
  const standardSink = await verifyingSink(t, (body, headers) => standard.verify(body, headers));
  const svixSink = await verifyingSink(t, (body, headers) => svix.verify(body, headers));
  const closedSink = await verifyingSink(t, (body, headers) => standard.verify(body, headers));
  const teams = await startSink(t, (_request, response) => response.writeHead(202).end());
  const slack = await startSink(t, (_request, response) => response.writeHead(200).end());
  const routes = [
    { name: 'standard', url: `${standardSink.url}/hooks`, types: ['change.*'], secret: SECRET_A },
    { name: 'svix', url: `${svixSink.url}/hooks`, types: ['change.*'], secret: [SECRET_B] },
    {
      name: 'closed',
      url: closedSink.url,
      types: ['change.updated', 'change.deleted'],
      services: [PARCELS],
      where: "status = 'Closed'",
      changed: ['status'],
      secret: SECRET_A,
    },
    { name: 'teams', url: teams.url, types: ['change.*'], layers: [0], services: [PARCELS], format: 'teams' },
    { name: 'slack', url: slack.url, types: ['change.created', 'change.updated'], format: 'slack' },
  ];
  const emulator = await startEmulator(t);
  const prefix = uniquePrefix();
  const geohook = await startGeohook(t, redis, {
    ...registrationEnv(emulator, [PARCELS], prefix),
    CHANGES: PARCELS,
    CHANGES_TRACK: 'status',
    GEOHOOK_CONFIG: configFile(t, { relays: routes }),
  });
  await waitFor('registered', async () => (await geohook.readyz()).status === 200);
  const events = await consumeChanges(t, redis.url, prefix);

  const url = `${emulator.url}/arcgis/rest/services/Hosted/Parcels/FeatureServer/0`;
  const authentication = ApiKeyManager.fromKey(await emulator.token());
  const added = await applyEdits({
    url,
    authentication,
    adds: ['A', 'B', 'C'].map((id, index) => ({ attributes: { parcel_id: id, status: 'Open' }, geometry: square(index * 100) as never })),
  });
  const [a, b, c] = added.addResults.map((result) => result.objectId);
  await waitFor('3 creates', () => events.length >= 3);
  await applyEdits({
    url,
    authentication,
    updates: [
      { attributes: { objectid: a, status: 'Closed' } },
      { attributes: { objectid: b, owner: 'Ada' } },
      { attributes: { objectid: c, status: 'Pending' } },
    ],
  });
  await waitFor('3 updates', () => events.length >= 6);
  await applyEdits({ url, authentication, updates: [{ attributes: { objectid: b, status: 'Closed', owner: 'Bo' } }], deletes: [a!] });
  await waitFor('an update and a delete', () => events.length >= 8);
  const ids = events.map((event) => event.id).sort();

  await waitFor('every event at both verifying sinks', () => standardSink.accepted.length >= 8 && svixSink.accepted.length >= 8);
  t.same([...standardSink.accepted].sort(), ids, 'standardwebhooks accepted every event, each once');
  t.same([...svixSink.accepted].sort(), ids, 'svix accepted every event, each once');
  t.equal(standardSink.received.length, 8, 'no request was refused or sent twice');

  const closedIds = events
    .filter((event) => event.type === 'change.updated' && event.after?.attributes.status === 'Closed')
    .map((event) => event.id)
    .sort();
  t.equal(closedIds.length, 2, 'two updates closed a parcel');
  await waitFor('the closing updates relayed', () => closedSink.accepted.length >= 2);
  await waitFor('teams and slack', () => teams.received.length >= 8 && slack.received.length >= 7);
  t.same([...closedSink.accepted].sort(), closedIds, 'the where and changed route took exactly the updates that closed a parcel');
  t.equal(teams.received.length, 8, 'teams: every event of layer 0');
  t.equal(slack.received.length, 7, 'slack: the 3 creates and 4 updates');
  for (const request of teams.received) t.ok(validTeams(JSON.parse(request.body.toString('utf8'))), 'the Teams schema accepts the message');
  for (const request of slack.received) t.ok(validSlack(JSON.parse(request.body.toString('utf8'))), 'the Slack schema accepts the message');
  t.match(JSON.parse(teams.received[3]!.body.toString('utf8')), {
    attachments: [{ content: { body: [{ text: /Parcels \{.*status Open → Closed by admin/ }] } }],
  });

  const sample: ReceivedRequest = standardSink.received[0]!;
  const body = sample.body.toString('utf8');
  const headers = headersOf(sample.headers);
  t.throws(() => standard.verify(body.replace('"type"', '"tYpe"'), headers), 'a tampered body is refused (standardwebhooks)');
  t.throws(() => new SvixWebhook(SECRET_A).verify(`${body} `, headers), 'a tampered body is refused (svix)');
  const event = events.find((candidate) => candidate.id === headers['webhook-id'])!;
  const keys = [parseWebhookSecret(SECRET_A)];
  const fresh = formatStandard(event, { keys, nowMs: Date.now() });
  const old = formatStandard(event, { keys, nowMs: Date.now() - 10 * 60_000 });
  t.ok(standard.verify(fresh.body, fresh.headers), 'signed now: accepted');
  t.throws(() => standard.verify(old.body, old.headers), 'signed 10 minutes ago: refused (standardwebhooks)');
  t.throws(() => new SvixWebhook(SECRET_A).verify(old.body, old.headers), 'signed 10 minutes ago: refused (svix)');
  t.equal(fresh.body, body, 'the body relayed is the Standard Webhooks body of the event');
});

t.test('feature events: each accepted delivery relayed once to a Power Automate route, with its secret and webhook-id', async (t) => {
  const flow = await startSink(t, (_request, response) => response.writeHead(202).end());
  const emulator = await startEmulator(t);
  const prefix = uniquePrefix();
  const route = { name: 'flow', url: flow.url, types: ['feature.*'], format: 'powerautomate', secret: 'a-flow-secret-of-24-chars' };
  const geohook = await startGeohook(t, redis, {
    ...registrationEnv(emulator, [PARCELS], prefix),
    GEOHOOK_CONFIG: configFile(t, { relays: [route] }),
  });
  await waitFor('registered', async () => (await geohook.readyz()).status === 200);
  const url = `${emulator.url}/arcgis/rest/services/Hosted/Parcels/FeatureServer/0`;
  const authentication = ApiKeyManager.fromKey(await emulator.token());
  await applyEdits({ url, authentication, adds: [{ attributes: { parcel_id: 'F1', status: 'Open' } }] });
  await applyEdits({ url, authentication, adds: [{ attributes: { parcel_id: 'F2', status: 'Open' } }] });
  await waitFor('two feature events relayed', () => flow.received.length >= 2);
  const bodies = flow.received.map((request) => JSON.parse(request.body.toString('utf8')) as { id: string; type: string; family: string });
  t.same(
    flow.received.map((request) => request.headers['webhook-id']),
    bodies.map((body) => body.id),
    'webhook-id is the stored event id',
  );
  t.equal(new Set(bodies.map((body) => body.id)).size, 2, 'two events, each once');
  t.ok(bodies.every((body) => body.family === 'feature' && body.type.startsWith('feature.')));
  t.ok(
    flow.received.every((request) => request.headers['x-geohook-secret'] === route.secret),
    'the shared secret in its header',
  );
  t.notOk('rawBody' in bodies[0]!, 'the readable event, without its base64 bytes');
});

t.test(
  'issue 51 (N6): an unverified delivery reaches only a route with allowUnverified; an untrusted changesUrl arrives marked untrusted',
  async (t) => {
    const verifier = new StandardWebhook(SECRET_A);
    const strict = await verifyingSink(t, (body, headers) => verifier.verify(body, headers));
    const open = await verifyingSink(t, (body, headers) => verifier.verify(body, headers));
    const types = ['gp.*', 'feature.*'];
    const prefix = uniquePrefix();
    const geohook = await startGeohook(t, redis, {
      GEOHOOK_PREFIX: prefix,
      HOOK_SECRETS: 'a-hook-key',
      REQUIRE_SIGNATURE: 'false',
      GEOHOOK_CONFIG: configFile(t, {
        relays: [
          { name: 'strict', url: strict.url, types, secret: SECRET_A },
          { name: 'open', url: open.url, types, secret: SECRET_A, allowUnverified: true },
        ],
      }),
    });
    const post = async (body: string, headers: Record<string, string> = {}): Promise<string> => {
      const response = await fetch(`${geohook.url}/webhooks/default`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
      });
      t.equal(response.status, 202);
      return ((await response.json()) as { id: string }).id;
    };
    const anonymous = JSON.stringify({
      serviceType: 'GPServer',
      folderName: 'Tools',
      serviceName: 'Buffer',
      jobId: '[Your session expired: sign in](https://evil.example/r)',
      events: [{ eventType: 'JobSucceeded' }],
    });
    const untrustedUrl = 'http://127.0.0.1:9/evil/rest/services/Hosted/Parcels/FeatureServer/extractChanges?serverGens=[1,2]';
    const signed = JSON.stringify({
      serviceType: 'FeatureServer',
      folderName: 'Hosted',
      serviceName: 'Parcels',
      changesUrl: untrustedUrl,
      events: [{ eventType: 'FeaturesUpdated', when: 1 }],
    });
    const anonymousId = await post(anonymous);
    const signedId = await post(signed, { 'x-service': sign('a-hook-key', signed) });

    // The fan-out hands events over in the order they were stored: once the later, signed one is at the strict
    // route, the anonymous one was either handed to it too or never will be.
    await waitFor('the signed delivery at the strict route', () => strict.accepted.includes(signedId));
    await waitFor(
      'both deliveries at the allowUnverified route',
      () => open.accepted.includes(anonymousId) && open.accepted.includes(signedId),
    );
    t.same(strict.accepted, [signedId], 'the strict route got the signed delivery only');
    const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
    const queue = new Queue(relayQueueName('strict'), { connection, prefix });
    t.teardown(async () => {
      await queue.close();
      connection.disconnect();
    });
    t.equal(await queue.getJob(anonymousId), undefined, 'and holds no job of the anonymous one');

    const dataOf = (sink: { verified: unknown[] }, id: string) =>
      (sink.verified as { data: { id: string; verified: boolean; changes?: { url: string; trusted: boolean } } }[]).find(
        ({ data }) => data.id === id,
      )!.data;
    t.match(dataOf(open, anonymousId), { verified: false }, 'the allowUnverified route got it, marked unverified');
    t.match(
      dataOf(strict, signedId),
      { verified: true, changes: { url: untrustedUrl, trusted: false } },
      'its changesUrl marked untrusted',
    );
  },
);
