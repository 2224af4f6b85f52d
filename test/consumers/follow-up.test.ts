import t, { type Test } from 'tap';
import { fetchChanges, fetchJobResult } from '../../src/consumers/follow-up.js';
import { EmulatorClock } from '../../src/emulator/clock.js';
import { AdminApiError, AdminAuthError, GeohookError } from '../../src/errors.js';
import type { EventFamily, GeohookEvent } from '../../src/events/envelope.js';
import { startEmulator, type TestEmulator } from '../helpers/emulator.js';
import { answerWith, startSink } from '../helpers/http-sink.js';
import type { Json } from '../helpers/json.js';
import { waitFor } from '../helpers/wait.js';

/** The emulator's viewer, with the token URL credentials must name. */
const viewerAt = (emulator: TestEmulator) => ({
  username: 'viewer',
  password: 'viewer.pass',
  tokenUrl: `${emulator.url}/arcgis/sharing/rest/generateToken`,
});

function eventOf(family: EventFamily, payload: unknown): GeohookEvent {
  return {
    id: 'e'.repeat(64),
    hook: 'default',
    source: 'webhook',
    type: family === 'gp' ? 'gp.job.succeeded' : 'feature.FeaturesCreated',
    types: [],
    family,
    receivedAt: new Date().toISOString(),
    service: {},
    contentType: 'application/json',
    verified: true,
    payload,
    rawBody: '',
  };
}

type Firing = () => Promise<{ body: Json }>;

/** Fires each of `firings` in turn and returns the payloads an active webhook of `service` received, in firing order. */
async function delivered(t: Test, emulator: TestEmulator, service: string, ...firings: Firing[]): Promise<Json[]> {
  const sink = await startSink(t, answerWith(200));
  await emulator.admin(`services/${service}/webhooks/create`, { name: 'follow', hookUrl: sink.url, active: 'true' });
  const ids: string[] = [];
  for (const fire of firings) ids.push(...((await fire()).body.deliveries as string[]));
  await waitFor(`${ids.length} deliveries at the sink`, () => sink.received.length >= ids.length);
  const payloads = sink.received.map(({ body }) => JSON.parse(body.toString('utf8')) as Json);
  return payloads.sort((a, b) => a.events[0].when - b.events[0].when);
}

const edit =
  (emulator: TestEmulator, changeType: string, layerId = 0): Firing =>
  () =>
    emulator.control('services/Hosted/Parcels.FeatureServer/edits', { changeType, layerId });
const job =
  (emulator: TestEmulator, outcome: string): Firing =>
  () =>
    emulator.control('services/Tools/Buffer.GPServer/jobs', { outcome });

/** The error `promise` rejects with; throws when it resolves. */
async function rejection(promise: Promise<unknown>): Promise<Json> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (err: unknown) => err as Json,
  );
}

/** A fetch that counts the tokens asked for. */
function countingFetch(): { fetch: typeof fetch; tokenRequests: () => number } {
  let count = 0;
  return {
    fetch: (input, init) => {
      if (String(input).endsWith('/generateToken')) count += 1;
      return fetch(input, init);
    },
    tokenRequests: () => count,
  };
}

t.test('fetchChanges reads the edits of an Enterprise delivery, with tokens from credentials', async (t) => {
  const emulator = await startEmulator(t);
  const [payload] = await delivered(t, emulator, 'Hosted/Parcels.FeatureServer', edit(emulator, 'FeaturesCreated', 0));
  const [changes, ...more] = await fetchChanges(eventOf('feature', payload), { auth: viewerAt(emulator), allowedOrigins: [emulator.url] });
  t.equal(more.length, 0);
  t.equal(changes!.changesUrl, payload!.changesUrl);
  t.match(changes!.layerServerGens, [{ id: 0, serverGen: Number }]);
  t.match(changes!.edits, [
    {
      id: 0,
      features: { adds: [{ attributes: { objectid: 1, globalid: /^\{/ }, geometry: { rings: Array } }], updates: [], deleteIds: [] },
    },
  ]);
});

t.test('fetchChanges turns a FeaturesDeleted delivery into deleteIds', async (t) => {
  const emulator = await startEmulator(t);
  const payloads = await delivered(
    t,
    emulator,
    'Hosted/Parcels.FeatureServer',
    edit(emulator, 'FeaturesCreated'),
    edit(emulator, 'FeaturesDeleted'),
  );
  const deleted = payloads.find((payload) => payload.events[0].eventType === 'FeaturesDeleted');
  const [changes] = await fetchChanges(eventOf('feature', deleted), { auth: viewerAt(emulator), allowedOrigins: [emulator.url] });
  t.same(changes!.edits, [{ id: 0, features: { adds: [], updates: [], deleteIds: [1] } }]);
});

t.test('fetchChanges reads every item of an ArcGIS Online array, decoding its changesUrl and following async jobs', async (t) => {
  const emulator = await startEmulator(t);
  const gens = async (changeType: string, layerId: number) =>
    (await emulator.control('services/Hosted/Parcels.FeatureServer/edits', { changeType, layerId })).body.serverGens as number[];
  const url = (serverGens: number[], extra: string) =>
    encodeURIComponent(
      `${emulator.url}/arcgis/rest/services/Hosted/Parcels/FeatureServer/extractChanges?serverGens=[${serverGens}]&async=true${extra}`,
    );
  const created = await gens('FeaturesCreated', 0);
  const deleted = await gens('FeaturesDeleted', 1);
  const payload = [
    {
      name: 'agol',
      layerId: 0,
      orgId: 'org',
      serviceName: 'Parcels',
      lastUpdatedTime: 1,
      changesUrl: url(created, '&returnUpdates=false&returnDeletes=false'),
      events: ['FeaturesCreated'],
    },
    {
      name: 'agol',
      layerId: 1,
      orgId: 'org',
      serviceName: 'Parcels',
      lastUpdatedTime: 2,
      changesUrl: url(deleted, '&returnInserts=false&returnUpdates=false'),
      events: ['FeaturesDeleted'],
    },
  ];
  t.match(payload[0]!.changesUrl, /^http%3A%2F%2F/);
  const changes = await fetchChanges(eventOf('feature', payload), {
    auth: { token: await emulator.token('viewer') },
    allowedOrigins: [emulator.url],
    pollIntervalMs: 5,
  });
  t.equal(changes.length, 2);
  t.match(changes[0], {
    changesUrl: /^http:\/\/127\.0\.0\.1:\d+\/arcgis\/rest\/services\//,
    edits: [{ id: 0, features: { adds: [{ attributes: { objectid: 1 } }], updates: [], deleteIds: [] } }],
  });
  t.same(changes[1]!.edits, [{ id: 1, features: { adds: [], updates: [], deleteIds: [1] } }]);
});

t.test('fetchJobResult reads the status, messages and every result of a GP job', async (t) => {
  const emulator = await startEmulator(t);
  const [succeeded] = await delivered(t, emulator, 'Tools/Buffer.GPServer', job(emulator, 'succeeded'));
  const result = await fetchJobResult(eventOf('gp', succeeded), { auth: viewerAt(emulator), allowedOrigins: [emulator.url] });
  t.match(result, {
    statusUrl: succeeded!.statusURL,
    jobId: succeeded!.jobId,
    jobStatus: 'esriJobSucceeded',
    messages: [{ type: 'esriJobMessageTypeInformative' }],
  });
  t.same(Object.keys(result.results), ['Output_Polygons', 'Summary']);
  t.match(result.results.Output_Polygons, {
    paramName: 'Output_Polygons',
    dataType: 'GPFeatureRecordSetLayer',
    value: { features: [{ geometry: { rings: Array } }] },
  });
  t.match(result.results.Summary, { dataType: 'GPString', value: /Buffered/ });
});

t.test('fetchJobResult of a failed job gives its error messages and no results', async (t) => {
  const emulator = await startEmulator(t);
  const [failed] = await delivered(t, emulator, 'Tools/Buffer.GPServer', job(emulator, 'failed'));
  const result = await fetchJobResult(eventOf('gp', [failed]), { auth: viewerAt(emulator), allowedOrigins: [emulator.url] });
  t.equal(result.jobStatus, 'esriJobFailed');
  t.same(result.results, {});
  t.ok(result.messages.some((message) => message.type === 'esriJobMessageTypeError'));
});

t.test('without a token the server answers 499, thrown as AdminAuthError', async (t) => {
  const emulator = await startEmulator(t);
  const [payload] = await delivered(t, emulator, 'Hosted/Parcels.FeatureServer', edit(emulator, 'FeaturesCreated'));
  const err = await rejection(fetchChanges(eventOf('feature', payload), { allowedOrigins: [emulator.url] }));
  t.ok(err instanceof AdminAuthError);
  t.match(err, { code: 'GEOHOOK_ERR_ADMIN_AUTH', serverCode: 499 });
});

t.test('an expired token: a static one fails with 498, credentials are renewed once and the call succeeds', async (t) => {
  const clock = new EmulatorClock();
  const emulator = await startEmulator(t, { clock });
  const [payload] = await delivered(t, emulator, 'Hosted/Parcels.FeatureServer', edit(emulator, 'FeaturesCreated'));
  const event = eventOf('feature', payload);
  const staticAuth = { token: await emulator.token('viewer') };
  const counting = countingFetch();
  const credentials = viewerAt(emulator);
  const allowedOrigins = [emulator.url];
  await fetchChanges(event, { auth: credentials, allowedOrigins, fetch: counting.fetch });
  clock.advanceDays(1);
  t.match(await rejection(fetchChanges(event, { auth: staticAuth, allowedOrigins })), { code: 'GEOHOOK_ERR_ADMIN_AUTH', serverCode: 498 });
  const [changes] = await fetchChanges(event, { auth: credentials, allowedOrigins, fetch: counting.fetch });
  t.equal(changes!.edits[0]!.features.adds.length, 1);
  t.equal(counting.tokenRequests(), 2, 'the first token, shared across calls, then one renewal');
});

t.test('a server that never answers fails the request after timeoutMs', async (t) => {
  // The sink never answers: without the timeout the request would wait until tap's limit.
  const sink = await startSink(t, () => undefined);
  const err = await rejection(
    fetchChanges(eventOf('feature', { changesUrl: `${sink.url}/arcgis/rest/services/S/FeatureServer/extractChanges` }), {
      auth: { token: 'x' },
      allowedOrigins: [sink.url],
      timeoutMs: 100,
    }),
  );
  t.ok(err instanceof AdminApiError);
  t.match(err, { code: 'GEOHOOK_ERR_ADMIN_API', message: /no answer within 100 ms/ });
});

t.test('an async job that never completes fails at the deadline; one that fails, at once', async (t) => {
  const statuses: Record<string, string> = { '/running': 'InProgress', '/failed': 'Failed' };
  const sink = await startSink(t, (request, response) => {
    const path = request.url!.split('?')[0]!.split('/changes')[0]!;
    const body = request.url!.includes('/changes') ? { statusUrl: `http://${request.headers.host}${path}` } : { status: statuses[path] };
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  const options = { auth: { token: 'x' }, allowedOrigins: [sink.url], pollIntervalMs: 10, deadlineMs: 300 };
  const started = Date.now();
  t.match(await rejection(fetchChanges(eventOf('feature', { changesUrl: `${sink.url}/running/changes` }), options)), {
    code: 'GEOHOOK_ERR_FOLLOW_UP',
    message: /within 300 ms/,
  });
  t.ok(Date.now() - started >= 290, 'polled until the deadline');
  t.match(await rejection(fetchChanges(eventOf('feature', { changesUrl: `${sink.url}/failed/changes` }), options)), {
    code: 'GEOHOOK_ERR_FOLLOW_UP',
    message: /Failed/,
  });
});

t.test(
  'the token goes in the form to allowed URLs only; a result redirected to allowed storage is fetched with GET and no token, to other storage not at all',
  async (t) => {
    const storage = await startSink(t, (_request, response) => response.writeHead(200).end(JSON.stringify({ edits: [] })));
    const server = await startSink(t, (request, response) => {
      if (request.url!.startsWith('/result')) return response.writeHead(302, { location: `${storage.url}/blob.json?sig=abc` }).end();
      const body = request.url!.startsWith('/status')
        ? { status: 'Completed', resultUrl: `http://${request.headers.host}/result/1.json` }
        : { statusUrl: `http://${request.headers.host}/status` };
      response.writeHead(200).end(JSON.stringify(body));
    });
    const event = eventOf('feature', { changesUrl: `${server.url}/changes?serverGens=%5B1,2%5D` });
    const changes = await fetchChanges(event, {
      auth: { token: 'secret-token-1234' },
      allowedOrigins: [server.url],
      allowedStorage: [storage.url],
    });
    t.same(changes[0]!.edits, []);
    t.same(
      server.received.map(({ body }) => new URLSearchParams(body.toString()).get('token')),
      ['secret-token-1234', 'secret-token-1234', 'secret-token-1234'],
      'the job, its status and its result file, each with the token',
    );
    t.equal(storage.received.length, 1, "the result's redirect to storage is followed");
    t.equal(storage.received[0]!.method, 'GET');
    t.equal(storage.received[0]!.body.length, 0, 'no body');
    t.notMatch(JSON.stringify(storage.received[0]!), /secret-token/);
    t.match(await rejection(fetchChanges(event, { auth: { token: 'secret-token-1234' }, allowedOrigins: [server.url] })), {
      code: 'GEOHOOK_ERR_UNTRUSTED_URL',
      message:
        /named by an answer of http:\/\/127\.0\.0\.1:\d+, is neither on that origin nor on signed storage \(https:\/\/\*\.arcgis\.com\): no request was sent/,
    });
    t.equal(storage.received.length, 1, "storage not allowed (the default is ArcGIS Online's) got nothing");
    t.match(await rejection(fetchChanges(event, { allowedOrigins: [server.url], allowedStorage: ['ftp://x'] })), {
      code: 'GEOHOOK_ERR_FOLLOW_UP',
      message: /^allowedStorage: /,
    });
  },
);

t.test('an event without a usable http(s) URL is a GEOHOOK_ERR_FOLLOW_UP error and nothing is fetched', async (t) => {
  const never: typeof fetch = async () => t.fail('nothing is fetched') as never;
  const options = { allowedOrigins: ['http://h'], fetch: never };
  const cases: [string, GeohookEvent, (event: GeohookEvent) => Promise<unknown>][] = [
    ['no changesUrl', eventOf('feature', { name: 'x' }), (e) => fetchChanges(e, options)],
    ['not a URL', eventOf('feature', { changesUrl: 'changes please' }), (e) => fetchChanges(e, options)],
    ['ftp', eventOf('feature', [{ changesUrl: 'ftp%3A%2F%2Fhost%2Fx' }]), (e) => fetchChanges(e, options)],
    ['empty array', eventOf('feature', []), (e) => fetchChanges(e, options)],
    ['a GP event to fetchChanges', eventOf('gp', { statusURL: 'http://h/x' }), (e) => fetchChanges(e, options)],
    ['no statusURL', eventOf('gp', { jobId: 'j' }), (e) => fetchJobResult(e, options)],
    ['two jobs', eventOf('gp', [{ statusURL: 'http://h/1' }, { statusURL: 'http://h/2' }]), (e) => fetchJobResult(e, options)],
  ];
  for (const [name, event, call] of cases) {
    const err = await rejection(call(event));
    t.ok(err instanceof GeohookError, name);
    t.equal(err.code, 'GEOHOOK_ERR_FOLLOW_UP', name);
  }
});

t.test('an answer without edits is an AdminApiError naming what is missing', async (t) => {
  const sink = await startSink(t, (_request, response) => response.writeHead(200).end(JSON.stringify({ something: 'else' })));
  const err = await rejection(fetchChanges(eventOf('feature', { changesUrl: `${sink.url}/x` }), { allowedOrigins: [sink.url] }));
  t.ok(err instanceof AdminApiError);
  t.match(err, { code: 'GEOHOOK_ERR_ADMIN_API', message: /'edits' array/ });
});

t.test('issue 33 H2: tokens go only to allowedOrigins, passwords only to the tokenUrl given, never where an event says', async (t) => {
  const attacker = await startSink(t, (_request, response) => response.writeHead(200).end(JSON.stringify({ token: 'evil', edits: [] })));
  const legit = await startSink(t, (_request, response) =>
    response.writeHead(200).end(JSON.stringify({ token: 'legit-token-1', expires: Date.now() + 3_600_000, edits: [] })),
  );
  const auth = { username: 'gisadmin', password: 'S3cret-Passw0rd!', tokenUrl: `${legit.url}/portal/sharing/rest/generateToken` };
  const changesUrl = `${attacker.url}/arcgis/rest/services/P/FeatureServer/extractChanges?serverGens=[1,2]`;
  const feature = eventOf('feature', { changesUrl });
  const gp = eventOf('gp', { statusURL: `${attacker.url}/arcgis/rest/services/T/GPServer/jobs/j1` });
  for (const call of [
    fetchChanges(feature, { auth, allowedOrigins: [legit.url] }),
    fetchJobResult(gp, { auth, allowedOrigins: [legit.url] }),
  ]) {
    t.match(await rejection(call), { code: 'GEOHOOK_ERR_UNTRUSTED_URL' });
  }
  t.equal(attacker.received.length, 0, 'the attacker got no request');
  t.equal(legit.received.length, 0, 'and no token was even asked for');

  // Credentials without a token URL, or no allowedOrigins at all: refused before anything is sent.
  const noTokenUrl = { username: 'gisadmin', password: 'S3cret-Passw0rd!' };
  t.match(await rejection(fetchChanges(feature, { auth: noTokenUrl, allowedOrigins: [attacker.url] })), {
    code: 'GEOHOOK_ERR_FOLLOW_UP',
    message: /tokenUrl/,
  });
  t.match(await rejection(fetchChanges(feature, {} as never)), { code: 'GEOHOOK_ERR_FOLLOW_UP', message: /allowedOrigins/ });
  t.equal(attacker.received.length, 0);

  // An allowed origin: the token goes there, the password to the token URL only.
  await fetchChanges(feature, { auth, allowedOrigins: [attacker.url] });
  t.same(
    attacker.received.map(({ url, body }) => [
      url.split('?')[0],
      new URLSearchParams(body.toString()).get('password'),
      new URLSearchParams(body.toString()).get('token'),
    ]),
    [['/arcgis/rest/services/P/FeatureServer/extractChanges', null, 'legit-token-1']],
  );
  t.same(
    legit.received.map(({ url }) => url),
    ['/portal/sharing/rest/generateToken'],
  );
});

t.test('issue 33 H2: an unverified delivery is not followed up unless allowUnverified; backfilled events are', async (t) => {
  const server = await startSink(t, (_request, response) => response.writeHead(200).end(JSON.stringify({ edits: [] })));
  const changesUrl = `${server.url}/arcgis/rest/services/P/FeatureServer/extractChanges?serverGens=[1,2]`;
  const unverified = { ...eventOf('feature', { changesUrl }), verified: false };
  const allowedOrigins = [server.url];
  t.match(await rejection(fetchChanges(unverified, { allowedOrigins })), { code: 'GEOHOOK_ERR_FOLLOW_UP', message: /not verified/ });
  t.equal(server.received.length, 0);
  t.same(await fetchChanges(unverified, { allowedOrigins, allowUnverified: true }), [{ changesUrl, layerServerGens: [], edits: [] }]);
  t.equal((await fetchChanges({ ...unverified, source: 'backfill' }, { allowedOrigins })).length, 1);
});

t.test('issue 33 M1: a request carrying a token follows no redirect; the error names where it pointed', async (t) => {
  const elsewhere = await startSink(t, answerWith(200));
  const server = await startSink(t, (_request, response) =>
    response.writeHead(307, { location: `${elsewhere.url}/stolen/extractChanges` }).end(),
  );
  const event = eventOf('feature', { changesUrl: `${server.url}/arcgis/rest/services/P/FeatureServer/extractChanges` });
  const err = await rejection(
    fetchChanges(event, { auth: { token: 'legit-token-XYZ123456' }, allowedOrigins: [server.url, elsewhere.url] }),
  );
  t.ok(err instanceof AdminApiError);
  t.match(err, {
    code: 'GEOHOOK_ERR_ADMIN_API',
    serverCode: 307,
    message: new RegExp(`redirected \\(HTTP 307\\) to ${elsewhere.url}/stolen/extractChanges`),
  });
  t.equal(elsewhere.received.length, 0, 'nothing was re-sent, not even to an allowed origin');
});
