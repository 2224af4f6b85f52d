import t from 'tap';
import { startEmulator } from '../../helpers/emulator.js';
import { answerWith, startSink } from '../../helpers/http-sink.js';
import { waitFor } from '../../helpers/wait.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

t.test('one applyEdits call fires each webhook once, with the change types it made and asked for', async (t) => {
  const emulator = await startEmulator(t);
  const sink = await startSink(t, answerWith(200));
  const service = 'services/Hosted/Parcels.FeatureServer';
  await emulator.admin(`${service}/webhooks/create`, { name: 'all', hookUrl: `${sink.url}/all`, changeTypes: '*', active: 'true' });
  await emulator.admin(`${service}/webhooks/create`, {
    name: 'created',
    hookUrl: `${sink.url}/created`,
    changeTypes: 'FeaturesCreated',
    active: 'true',
  });
  await emulator.admin(`${service}/webhooks/create`, {
    name: 'deleted',
    hookUrl: `${sink.url}/deleted`,
    changeTypes: 'FeaturesDeleted',
    active: 'true',
  });
  await emulator.control(`${service}/applyEdits`, { edits: [{ id: 0, adds: [{ attributes: { parcel_id: 'P-1' } }] }], lose: true });
  const { body } = await emulator.control(`${service}/applyEdits`, {
    edits: [
      { id: 0, adds: [{ attributes: { parcel_id: 'P-2' } }], updates: [{ attributes: { objectid: 1, status: 'Closed' } }] },
      { id: 1, adds: [{ attributes: { inspector: 'a' } }] },
    ],
  });
  t.equal((body.deliveries as string[]).length, 2, 'the hook asking only for deletes is not fired');
  const received = await waitFor('two deliveries', () => sink.received.length >= 2 && sink.received);
  const byPath = Object.fromEntries(received.map((request) => [request.url, JSON.parse(request.body.toString()) as Json]));
  t.same(
    byPath['/all']!.events.map((event: Json) => event.eventType),
    ['FeaturesCreated', 'FeaturesUpdated'],
  );
  t.same(
    byPath['/created']!.events.map((event: Json) => event.eventType),
    ['FeaturesCreated'],
  );
  t.match(byPath['/all']!.changesUrl, new RegExp(`serverGens=%5B\\d+,${body.serverGen}%5D$`));
});

t.test('a rolled-back call makes no generation and fires nothing', async (t) => {
  const emulator = await startEmulator(t);
  const sink = await startSink(t, answerWith(200));
  await emulator.admin('services/Hosted/Parcels.FeatureServer/webhooks/create', {
    name: 'all',
    hookUrl: sink.url,
    changeTypes: '*',
    active: 'true',
  });
  const { body } = await emulator.control('services/Hosted/Parcels.FeatureServer/applyEdits', {
    edits: [{ id: 0, adds: [{ attributes: { parcel_id: 'P-1' } }, { attributes: { status: 'Gone' } }] }],
  });
  t.same(body, {
    serverGen: null,
    deliveries: [],
    results: [
      {
        id: 0,
        addResults: [
          {
            objectId: 1,
            globalId: (body.results as Json[])[0]!.addResults[0].globalId,
            success: false,
            error: { code: 1003, description: 'Operation rolled back.' },
          },
          { objectId: -1, globalId: null, success: false, error: { code: 1016, description: 'Setting of value for status failed.' } },
        ],
        updateResults: [],
        deleteResults: [],
      },
    ],
  });
  t.equal(sink.received.length, 0);
});

t.test('the {changeType} control makes a real feature change of that type', async (t) => {
  const emulator = await startEmulator(t);
  const token = await emulator.token();
  const edits = 'services/Hosted/Parcels.FeatureServer/edits';
  const rows = async () =>
    (
      (await (
        await fetch(
          `${emulator.url}/arcgis/rest/services/Hosted/Parcels/FeatureServer/0/query?f=json&where=1%3D1&outFields=*&token=${token}`,
        )
      ).json()) as Json
    ).features.map((feature: Json) => [feature.attributes.objectid, feature.attributes.status]);
  const updatedFirst = await emulator.control(edits, { changeType: 'FeaturesUpdated' });
  t.equal(updatedFirst.status, 200);
  t.same(await rows(), [[1, 'Closed']], 'an empty layer gets a feature first, then the update moves its status');
  await emulator.control(edits, { changeType: 'FeaturesCreated' });
  await emulator.control(edits, { changeType: 'FeaturesDeleted' });
  t.same(await rows(), [[1, 'Closed']], 'created then deleted: the newest feature');
  t.match(await emulator.control(edits, { changeType: 'FeaturesCreated', layerId: 9 }), { status: 400, body: { messages: [/layerId/] } });
});
