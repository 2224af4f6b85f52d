import { ApiKeyManager, ArcGISAuthError, Job, request } from '@esri/arcgis-rest-request';
import t, { type Test } from 'tap';
import { EmulatorClock } from '../../src/emulator/clock.js';
import { FiredHistory } from '../../src/emulator/rest-history.js';
import { startEmulator, type TestEmulator } from '../helpers/emulator.js';
import { answerWith, startSink } from '../helpers/http-sink.js';
import type { Json } from '../helpers/json.js';
import { waitFor } from '../helpers/wait.js';

const PARCELS = 'Hosted/Parcels/FeatureServer';

/** GETs a REST resource (a path under /arcgis/rest/services, or a full URL) with the viewer's token unless `params` has one. */
async function rest(t: Test, emulator: TestEmulator, path: string, params: Record<string, string> = {}): Promise<Json> {
  const url = new URL(path.startsWith('http') ? path : `${emulator.url}/arcgis/rest/services/${path}`);
  if (!('token' in params)) url.searchParams.set('token', await emulator.token('viewer'));
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  const response = await fetch(url);
  t.equal(response.status, 200, `HTTP 200 from ${url.pathname}`);
  const text = await response.text();
  t.notMatch(text, /\n\s+at /, 'no stack');
  return JSON.parse(text) as Json;
}

const fire = async (emulator: TestEmulator, changeType: string, layerId = 0): Promise<[number, number]> =>
  (await emulator.control('services/Hosted/Parcels.FeatureServer/edits', { changeType, layerId })).body.serverGens as [number, number];

const changes = (t: Test, emulator: TestEmulator, [from, to]: readonly number[], params: Record<string, string> = {}) =>
  rest(t, emulator, `${PARCELS}/extractChanges`, { serverGens: `[${from},${to}]`, ...params });

t.test('a GP job status reports the outcome fired, with results only when it succeeded', async (t) => {
  const emulator = await startEmulator(t);
  const expected = { succeeded: 'esriJobSucceeded', failed: 'esriJobFailed', canceled: 'esriJobCancelled' };
  for (const [outcome, jobStatus] of Object.entries(expected)) {
    const { jobId } = (await emulator.control('services/Tools/Buffer.GPServer/jobs', { outcome })).body as { jobId: string };
    const status = await rest(t, emulator, `Tools/Buffer/GPServer/Buffer/jobs/${jobId}`, { f: 'json' });
    t.match(status, {
      jobId,
      jobStatus,
      inputs: { Distance: { paramUrl: 'inputs/Distance' } },
      messages: [{ type: 'esriJobMessageTypeInformative', description: 'Submitted.' }],
    });
    t.same(Object.keys(status.results), outcome === 'succeeded' ? ['Output_Polygons', 'Summary'] : [], `${outcome}: results`);
    t.equal(
      status.messages.some((message: Json) => message.type === 'esriJobMessageTypeError'),
      outcome === 'failed',
      `${outcome}: error messages`,
    );
  }
});

t.test('a GP result and input answer {paramName, dataType, value}; a failed job has no results', async (t) => {
  const emulator = await startEmulator(t);
  const job = async (outcome: string) => (await emulator.control('services/Tools/Buffer.GPServer/jobs', { outcome })).body.jobId as string;
  const done = await job('succeeded');
  const polygons = await rest(t, emulator, `Tools/Buffer/GPServer/Buffer/jobs/${done}/results/Output_Polygons`);
  t.match(polygons, {
    paramName: 'Output_Polygons',
    dataType: 'GPFeatureRecordSetLayer',
    value: { geometryType: 'esriGeometryPolygon', features: [{ geometry: { rings: Array } }] },
  });
  t.same(await rest(t, emulator, `Tools/Buffer/GPServer/Buffer/jobs/${done}/inputs/Distance`), {
    paramName: 'Distance',
    dataType: 'GPLinearUnit',
    value: { distance: 1, units: 'esriMiles' },
  });
  t.match(await rest(t, emulator, `Tools/Buffer/GPServer/Buffer/jobs/${done}/results/Nope`), { error: { code: 404 } });
  t.match(await rest(t, emulator, `Tools/Buffer/GPServer/Buffer/jobs/${await job('failed')}/results/Summary`), { error: { code: 404 } });
});

t.test('an unknown job, or a job asked under another service or task, is a 404 in the REST error shape', async (t) => {
  const emulator = await startEmulator(t);
  const { jobId } = (await emulator.control('services/Tools/Buffer.GPServer/jobs', {})).body as { jobId: string };
  t.same(await rest(t, emulator, 'Tools/Buffer/GPServer/Buffer/jobs/jnope'), {
    error: { code: 404, message: "Job 'jnope' does not exist or is inaccessible.", details: [] },
  });
  t.match(await rest(t, emulator, `Tools/Buffer/GPServer/Other/jobs/${jobId}`), { error: { code: 404 } });
  t.match(await rest(t, emulator, `Tools/Geocode/GPServer/Buffer/jobs/${jobId}`), { error: { code: 404 } });
  t.match(await rest(t, emulator, 'Tools/Nope/GPServer/Buffer/jobs/x'), { error: { code: 404, message: /does not exist/ } });
  t.match(await rest(t, emulator, 'Tools/Buffer/GPServer/Buffer/nothing/here'), { error: { code: 404 } });
  t.match(await rest(t, emulator, `Tools/Buffer/GPServer/Buffer/jobs/${jobId}`, { f: 'html' }), { error: { code: 400, message: /'f'/ } });
});

t.test('the REST resources need a valid token: 499 without, 498 invalid or expired; any user may read', async (t) => {
  const clock = new EmulatorClock();
  const emulator = await startEmulator(t, { clock });
  const { jobId } = (await emulator.control('services/Tools/Buffer.GPServer/jobs', {})).body as { jobId: string };
  const path = `Tools/Buffer/GPServer/Buffer/jobs/${jobId}`;
  t.match(await rest(t, emulator, path, { token: '' }), { error: { code: 499, details: [] } });
  t.match(await rest(t, emulator, path, { token: 'forged' }), { error: { code: 498 } });
  t.match(await rest(t, emulator, `${PARCELS}/extractChanges`, { token: 'forged', serverGens: '[0,1]' }), { error: { code: 498 } });
  t.match(await rest(t, emulator, path), { jobStatus: 'esriJobSucceeded' }, 'the viewer (no admin role) reads');
  const form = new URLSearchParams({ token: await emulator.token('admin'), f: 'json' });
  t.match(
    await (await fetch(`${emulator.url}/arcgis/rest/services/${path}`, { method: 'POST', body: form })).json(),
    { jobId },
    'token in a form',
  );
  clock.advanceDays(1);
  t.match(await rest(t, emulator, path), { error: { code: 498, details: ['Token has expired.'] } });
});

t.test('the changesUrl of each delivered payload selects the edit that fired it, even at one instant', async (t) => {
  const emulator = await startEmulator(t, { clock: new EmulatorClock({ realNow: () => 1_730_385_704_000 }) });
  const sink = await startSink(t, answerWith(200));
  await emulator.admin('services/Hosted/Parcels.FeatureServer/webhooks/create', { name: 'all', hookUrl: sink.url, active: 'true' });
  for (const changeType of ['FeaturesCreated', 'FeaturesUpdated', 'FeaturesDeleted']) await fire(emulator, changeType, 0);
  await waitFor('three deliveries at the sink', () => sink.received.length >= 3);
  const payloads = sink.received.map(({ body }) => JSON.parse(body.toString('utf8')) as Json);
  const byType = Object.fromEntries(payloads.map((payload) => [payload.events[0].eventType, payload.changesUrl as string]));
  const created = await rest(t, emulator, byType.FeaturesCreated!);
  t.match(created, { layerServerGens: [{ id: 0, serverGen: Number }], edits: [{ id: 0, features: { updates: [], deleteIds: [] } }] });
  const [feature] = created.edits[0].features.adds;
  t.match(feature, {
    attributes: { objectid: 1, globalid: /^\{[0-9A-F]{8}(-[0-9A-F]{4}){3}-[0-9A-F]{12}\}$/ },
    geometry: {
      rings: [
        [
          [Number, Number],
          [Number, Number],
          [Number, Number],
          [Number, Number],
          [Number, Number],
        ],
      ],
    },
  });
  const updated = await rest(t, emulator, byType.FeaturesUpdated!);
  t.same(
    updated.edits[0].features.updates.map((f: Json) => f.attributes.globalid),
    [feature.attributes.globalid],
    'the same feature updated',
  );
  t.same(updated.edits[0].features.adds, []);
  t.same((await rest(t, emulator, byType.FeaturesDeleted!)).edits[0].features, { adds: [], updates: [], deleteIds: [1] });
});

t.test('a serverGens range gives the net changes of its edits, by layer; a range without edits gives none', async (t) => {
  const emulator = await startEmulator(t);
  const [start] = await fire(emulator, 'FeaturesCreated', 0);
  await fire(emulator, 'FeaturesCreated', 0);
  const [, lastOfLayer0] = await fire(emulator, 'FeaturesUpdated', 0);
  await fire(emulator, 'FeaturesCreated', 1);
  const [, end] = await fire(emulator, 'AttachmentsCreated', 1);
  const all = await changes(t, emulator, [start, end]);
  t.same(
    all.edits.map((edit: Json) => edit.id),
    [0, 1],
  );
  t.same(
    all.edits[0].features.adds.map((f: Json) => f.attributes.objectid),
    [1, 2],
    'created then updated is an add',
  );
  t.same(all.edits[0].features.updates, []);
  t.same(
    all.edits[1].features.adds.map((f: Json) => f.attributes.objectid),
    [1],
  );
  t.same(
    all.layerServerGens,
    [
      { id: 0, serverGen: end },
      { id: 1, serverGen: end },
    ],
    'each layer is answered up to the end of the range',
  );
  t.ok(lastOfLayer0 < end);
  const layerOne = await changes(t, emulator, [start, end], { layers: '[1]' });
  t.same(
    layerOne.edits.map((edit: Json) => edit.id),
    [1],
  );
  t.same(await changes(t, emulator, [0, start]), {
    layerServerGens: [],
    transportType: 'esriTransportTypeEmbedded',
    responseType: 'esriDataChangesResponseTypeEdits',
    edits: [],
  });
  const createdThenDeleted = [await fire(emulator, 'FeaturesCreated', 1), await fire(emulator, 'FeaturesDeleted', 1)];
  t.same(
    (await changes(t, emulator, [createdThenDeleted[0]![0], createdThenDeleted[1]![1]])).edits[0].features,
    { adds: [], updates: [], deleteIds: [] },
    'created then deleted: nothing',
  );
});

t.test(
  "a change-tracked service's resource gives each layer's server generations; extractChanges from there gives what came after",
  async (t) => {
    const emulator = await startEmulator(t);
    const before = await rest(t, emulator, PARCELS);
    t.same(
      before.layers.map((layer: Json) => layer.id),
      [0],
    );
    const [initial] = before.changeTrackingInfo.layerServerGens as { id: number; minServerGen: number; serverGen: number }[];
    t.match(initial, { id: 0, serverGen: Number, minServerGen: Number });
    t.same((await changes(t, emulator, [initial!.serverGen, initial!.serverGen])).edits, [], 'nothing up to it');

    const fired: [number, number][] = [];
    for (let i = 0; i < 5; i += 1) fired.push(await fire(emulator, 'FeaturesCreated', 1));
    const gens = fired.map(([, to]) => to);
    t.ok(
      gens.every((gen, index) => index === 0 || gen > gens[index - 1]!),
      `every edit has a generation of its own: ${gens.join(' ')}`,
    );
    t.ok(fired[0]![0] >= initial!.serverGen, 'after the generation reported before');
    const after = await rest(t, emulator, PARCELS);
    t.same(
      after.tables.map((table: Json) => table.id),
      [1],
      'the Inspections table is listed with the tables',
    );
    const inspections = (after.changeTrackingInfo.layerServerGens as Json[]).find((layer) => layer.id === 1);
    t.same(inspections, { id: 1, minServerGen: initial!.minServerGen, serverGen: gens[4] }, 'the newest edit; the history since the start');
    t.ok(initial!.minServerGen <= initial!.serverGen, 'the history starts at the emulator’s start');
    const since = await changes(t, emulator, [initial!.serverGen, inspections!.serverGen as number]);
    t.equal(since.edits.find((layer: Json) => layer.id === 1).features.adds.length, 5, 'from the first reading: every edit since');

    const roads = await rest(t, emulator, 'Hosted/Roads/FeatureServer');
    t.notOk('changeTrackingInfo' in roads, 'a service without change tracking has no changeTrackingInfo');
  },
);

t.test('returnInserts, returnUpdates and returnDeletes=false leave those lists out', async (t) => {
  const emulator = await startEmulator(t);
  const [from] = await fire(emulator, 'FeaturesCreated');
  const [, to] = await fire(emulator, 'FeaturesCreated');
  t.same(Object.keys((await changes(t, emulator, [from, to], { returnInserts: 'false' })).edits[0].features), ['updates', 'deleteIds']);
  t.same(Object.keys((await changes(t, emulator, [from, to], { returnUpdates: 'false', returnDeletes: 'false' })).edits[0].features), [
    'adds',
  ]);
});

t.test("returnIdsOnly=true answers each layer's objectIds {adds, updates, deletes}: the ids of the full answer", async (t) => {
  const emulator = await startEmulator(t);
  const resource = await rest(t, emulator, `${PARCELS}`);
  t.match(resource.extractChangesCapabilities, { supportsReturnIdsOnly: true, supportsServerGens: true }, 'advertised');
  await fire(emulator, 'FeaturesCreated', 0);
  await fire(emulator, 'FeaturesCreated', 1);
  const [from] = await fire(emulator, 'FeaturesUpdated', 0);
  await fire(emulator, 'FeaturesDeleted', 1);
  const [, to] = await fire(emulator, 'FeaturesCreated', 0);
  const full = await changes(t, emulator, [from, to]);
  const idsOnly = await changes(t, emulator, [from, to], { returnIdsOnly: 'true' });
  const objectIds = (features: Json[]) => features.map((feature) => feature.attributes.objectid);
  t.same(
    idsOnly.edits,
    full.edits.map((layer: Json) => ({
      id: layer.id,
      objectIds: { adds: objectIds(layer.features.adds), updates: objectIds(layer.features.updates), deletes: layer.features.deleteIds },
    })),
  );
  const kinds = ['adds', 'updates', 'deletes'].filter((kind) => idsOnly.edits.some((layer: Json) => layer.objectIds[kind].length > 0));
  t.same(kinds, ['adds', 'updates', 'deletes'], 'every kind of change');
  t.same(idsOnly.layerServerGens, full.layerServerGens);
  t.same(Object.keys((await changes(t, emulator, [from, to], { returnIdsOnly: 'true', returnInserts: 'false' })).edits[0].objectIds), [
    'updates',
    'deletes',
  ]);
});

t.test('extractChanges with async=true answers a statusUrl: InProgress, then Completed with a resultUrl', async (t) => {
  const emulator = await startEmulator(t);
  const gens = await fire(emulator, 'FeaturesDeleted', 0);
  const { statusUrl } = await changes(t, emulator, gens, { async: 'true' });
  t.match(statusUrl, new RegExp(`^${emulator.url}/arcgis/rest/services/${PARCELS}/jobs/[0-9a-f]{32}$`));
  const running = await rest(t, emulator, statusUrl);
  t.match(running, { status: 'InProgress', submissionTime: Number });
  t.notOk('resultUrl' in running, 'no result before it completes');
  const completed = await rest(t, emulator, statusUrl);
  t.match(completed, { status: 'Completed', resultUrl: new RegExp(`^${emulator.url}/emulator/storage/[0-9a-f]{32}$`) });
  t.same(await (await fetch(completed.resultUrl)).json(), await changes(t, emulator, gens), 'read without a token');
  t.match(
    await rest(t, emulator, `Hosted/Roads/FeatureServer/jobs/${statusUrl.split('/').at(-1)}`),
    { error: { code: 404 } },
    'not under another service',
  );
});

t.test('extractChanges refuses a missing or malformed serverGens or layers with 400', async (t) => {
  const emulator = await startEmulator(t);
  t.match(await rest(t, emulator, `${PARCELS}/extractChanges`), { error: { code: 400, message: /serverGens/ } });
  for (const serverGens of ['[5,1]', '[1]', 'nope', '[-1,2]'])
    t.match(
      await rest(t, emulator, `${PARCELS}/extractChanges`, { serverGens }),
      { error: { code: 400, message: /serverGens/ } },
      serverGens,
    );
  t.match(await changes(t, emulator, [0, 1], { layers: '[x]' }), { error: { code: 400, message: /layers/ } });
  t.match(await rest(t, emulator, 'Tools/Buffer/FeatureServer/extractChanges', { serverGens: '[0,1]' }), { error: { code: 404 } });
});

t.test('the history keeps the last N jobs', async (t) => {
  const history = new FiredHistory(2);
  for (const jobId of ['a', 'b', 'c'])
    history.recordJob({ jobId, service: 'Tools/Buffer.GPServer', taskName: 'Buffer', outcome: 'succeeded', submitted: 0 });
  t.same(
    ['a', 'b', 'c'].map((id) => history.job(id)?.jobId),
    [undefined, 'b', 'c'],
  );
});

t.test("the vendor's client reads the job and its results, and sees a bad token as an auth error", async (t) => {
  const emulator = await startEmulator(t);
  const { jobId } = (await emulator.control('services/Tools/Buffer.GPServer/jobs', {})).body as { jobId: string };
  const url = `${emulator.url}/arcgis/rest/services/Tools/Buffer/GPServer/Buffer`;
  const job = await Job.fromExistingJob({ id: jobId, url, authentication: ApiKeyManager.fromKey(await emulator.token('viewer')) });
  const results = (await job.getAllResults()) as Json;
  t.match(results, { Output_Polygons: { dataType: 'GPFeatureRecordSetLayer' }, Summary: { value: /Buffered/ } });
  const error = await request(`${url}/jobs/${jobId}`, { params: { token: 'forged' } }).catch((err: unknown) => err);
  t.ok(error instanceof ArcGISAuthError, 'an ArcGISAuthError');
});
