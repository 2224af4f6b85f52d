import {
  addFeatures,
  applyEdits,
  deleteFeatures,
  queryFeatures,
  updateFeatures,
  type IQueryFeaturesResponse,
} from '@esri/arcgis-rest-feature-service';
import { ApiKeyManager, ArcGISRequestError } from '@esri/arcgis-rest-request';
import t from 'tap';
import { startEmulator, type TestEmulator } from '../../helpers/emulator.js';
import { square } from '../../helpers/square.js';

// The vendor's JavaScript client edits and queries the emulator's Parcels as it would the product's, on the
// Enterprise server and on the Online organization (the same store, two addresses).

const sides = [
  ['Enterprise', (emulator: TestEmulator) => `${emulator.url}/arcgis/rest/services/Hosted/Parcels/FeatureServer`],
  ['Online', (emulator: TestEmulator) => `${emulator.url}/geohookOrg/ArcGIS/rest/services/Parcels/FeatureServer`],
] as const;

for (const [side, serviceUrlOf] of sides) {
  t.test(`${side}: @esri/arcgis-rest-feature-service adds, updates, deletes and queries Parcels`, async (t) => {
    const emulator = await startEmulator(t);
    const authentication = ApiKeyManager.fromKey(await emulator.token());
    const url = `${serviceUrlOf(emulator)}/0`;

    const added = await addFeatures({
      url,
      authentication,
      features: [
        { attributes: { parcel_id: 'P-1', owner: 'Ada', status: 'Open', area_sqm: 812.5 }, geometry: square(0, 0) as never },
        { attributes: { parcel_id: 'P-2', owner: 'Grace', status: 'Pending' }, geometry: square(100, 0) as never },
      ],
    });
    t.match(added.addResults, [
      { objectId: 1, globalId: /^\{[0-9A-F-]{36}\}$/, success: true },
      { objectId: 2, success: true },
    ]);

    const updated = await updateFeatures({ url, authentication, features: [{ attributes: { objectid: 1, status: 'Closed' } }] });
    t.same(updated.updateResults, [{ objectId: 1, globalId: added.addResults[0]!.globalId, success: true }]);

    const deleted = await deleteFeatures({ url, authentication, objectIds: [2] });
    t.same(deleted.deleteResults, [{ objectId: 2, globalId: added.addResults[1]!.globalId, success: true }]);
    const byWhere = new URLSearchParams({ f: 'json', token: await emulator.token(), where: "owner = 'Nobody'" });
    t.same(
      await (await fetch(`${url}/deleteFeatures`, { method: 'POST', body: byWhere })).json(),
      { deleteResults: [] },
      'a where that selects nothing deletes nothing',
    );

    const queried = (await queryFeatures({ url, authentication, where: "status = 'Closed'", outFields: '*' })) as IQueryFeaturesResponse;
    t.equal(queried.features.length, 1);
    t.match(queried.features[0], {
      attributes: {
        objectid: 1,
        parcel_id: 'P-1',
        owner: 'Ada',
        status: 'Closed',
        area_sqm: 812.5,
        created_user: 'admin',
        last_edited_user: 'admin',
      },
      geometry: {
        rings: [
          [
            [0, 0],
            [0, 50],
            [50, 50],
            [50, 0],
            [0, 0],
          ],
        ],
      },
    });
    t.ok(
      (queried.features[0]!.attributes.last_edited_date as number) > (queried.features[0]!.attributes.created_date as number),
      'editor tracking: the update is later than the creation',
    );
    t.same(queried.spatialReference, { wkid: 102100, latestWkid: 3857 });
  });

  t.test(
    `${side}: a value outside the coded-value domain comes back as the product's per-feature error, and nothing is applied`,
    async (t) => {
      const emulator = await startEmulator(t);
      const authentication = ApiKeyManager.fromKey(await emulator.token());
      const url = `${serviceUrlOf(emulator)}/0`;
      const answer = await addFeatures({
        url,
        authentication,
        features: [
          { attributes: { parcel_id: 'P-1', status: 'Open' }, geometry: square(0, 0) as never },
          { attributes: { parcel_id: 'P-2', status: 'Demolished' }, geometry: square(100, 0) as never },
        ],
      });
      t.same(answer.addResults, [
        {
          objectId: 1,
          globalId: answer.addResults[0]!.globalId,
          success: false,
          error: { code: 1003, description: 'Operation rolled back.' },
        },
        { objectId: -1, globalId: null, success: false, error: { code: 1016, description: 'Setting of value for status failed.' } },
      ]);
      const count = await queryFeatures({ url, authentication, where: '1=1', returnCountOnly: true });
      t.same(count, { count: 0 }, 'rolled back: no feature added');

      const partial = await addFeatures({
        url,
        authentication,
        rollbackOnFailure: false,
        features: [
          { attributes: { parcel_id: 'P-3', status: 'Open' } },
          { attributes: { parcel_id: 'a parcel id longer than twenty characters' } },
        ],
      });
      t.match(partial.addResults, [
        { success: true },
        { success: false, error: { code: 1016, description: 'Setting of value for parcel_id failed.' } },
      ]);
      t.same(
        await queryFeatures({ url, authentication, where: '1=1', returnCountOnly: true }),
        { count: 1 },
        'without rollback the valid one is applied',
      );
    },
  );
}

t.test('the service-level applyEdits edits a parcel and its inspection in one generation, by GlobalID', async (t) => {
  const emulator = await startEmulator(t);
  const authentication = ApiKeyManager.fromKey(await emulator.token());
  const url = `${emulator.url}/arcgis/rest/services/Hosted/Parcels/FeatureServer`;
  const parcel = '{11111111-2222-3333-4444-555555555555}';
  const before = (await (await fetch(`${url}?f=json&token=${await emulator.token()}`)).json()) as {
    changeTrackingInfo: { layerServerGens: { serverGen: number }[] };
  };
  const answer = await applyEdits({
    url: `${url}/0`,
    authentication,
    useGlobalIds: true,
    adds: [{ attributes: { globalid: parcel, parcel_id: 'P-9', status: 'Open' }, geometry: square(0, 0) as never }],
  });
  t.same(answer.addResults, [{ objectId: 1, globalId: parcel, success: true }]);
  const form = new URLSearchParams({
    f: 'json',
    token: await emulator.token(),
    useGlobalIds: 'true',
    edits: JSON.stringify([
      { id: 0, updates: [{ attributes: { globalid: parcel, status: 'Pending' } }] },
      { id: 1, adds: [{ attributes: { parcel_guid: parcel, inspector: 'inspector7', result: 'pass', inspected_on: '2026-11-02' } }] },
    ]),
  });
  const service = (await (await fetch(`${url}/applyEdits`, { method: 'POST', body: form })).json()) as Record<string, unknown>[];
  t.match(service, [
    { id: 0, addResults: [], updateResults: [{ objectId: 1, globalId: parcel, success: true }], deleteResults: [] },
    { id: 1, addResults: [{ objectId: 1, success: true }], updateResults: [], deleteResults: [] },
  ]);
  const after = (await (await fetch(`${url}?f=json&token=${await emulator.token()}`)).json()) as {
    changeTrackingInfo: { layerServerGens: { id: number; serverGen: number }[] };
  };
  const [parcels, inspections] = after.changeTrackingInfo.layerServerGens;
  t.equal(parcels!.serverGen, inspections!.serverGen, 'one generation for both layers');
  t.ok(parcels!.serverGen > before.changeTrackingInfo.layerServerGens[0]!.serverGen);
});

t.test('a BigInteger beyond 2^53 is stored and answered with every digit', async (t) => {
  const emulator = await startEmulator(t);
  const token = await emulator.token();
  const url = `${emulator.url}/arcgis/rest/services/Hosted/Parcels/FeatureServer/0`;
  const adds = '[{"attributes":{"parcel_id":"P-1","assessed_value":9007199254740993}}]';
  const added = await (await fetch(`${url}/applyEdits`, { method: 'POST', body: new URLSearchParams({ f: 'json', token, adds }) })).text();
  t.match(added, /"success":true/);
  const text = await (
    await fetch(`${url}/query?f=json&where=assessed_value%3D9007199254740993&outFields=assessed_value&token=${token}`)
  ).text();
  t.match(text, /"assessed_value":9007199254740993\}/, 'the exact digits, not 9007199254740992');
});

t.test('issue 51: the control applyEdits keeps a BigInteger beyond 2^53 exact, as the REST applyEdits does', async (t) => {
  const emulator = await startEmulator(t);
  const added = await fetch(`${emulator.url}/emulator/services/Hosted/Parcels.FeatureServer/applyEdits`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"edits":[{"id":0,"adds":[{"attributes":{"parcel_id":"P-1","assessed_value":9007199254740993}}]}]}',
  });
  t.equal(added.status, 200);
  t.match(await added.text(), /"addResults":\[\{"objectId":1,[^\]]*"success":true/);
  const url = `${emulator.url}/arcgis/rest/services/Hosted/Parcels/FeatureServer/0`;
  const text = await (await fetch(`${url}/query?f=json&where=1%3D1&outFields=assessed_value&token=${await emulator.token()}`)).text();
  t.match(text, /"assessed_value":9007199254740993\}/, 'the exact digits, not 9007199254740992');
  const malformed = await fetch(`${emulator.url}/emulator/services/Hosted/Parcels.FeatureServer/applyEdits`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"edits":',
  });
  t.equal(malformed.status, 400, 'a body that is not JSON is a request error');
});

t.test('an edit of an unknown layer, or with unreadable features, is refused as a request error', async (t) => {
  const emulator = await startEmulator(t);
  const authentication = ApiKeyManager.fromKey(await emulator.token());
  const base = `${emulator.url}/arcgis/rest/services/Hosted/Parcels/FeatureServer`;
  const missing = await addFeatures({ url: `${base}/7`, authentication, features: [{ attributes: {} }] }).catch((err: unknown) => err);
  t.ok(missing instanceof ArcGISRequestError);
  t.equal((missing as ArcGISRequestError).code, 400);
  const token = await emulator.token();
  const garbled = (await (
    await fetch(`${base}/0/applyEdits`, { method: 'POST', body: new URLSearchParams({ f: 'json', token, adds: '[{' }) })
  ).json()) as Record<string, unknown>;
  t.match(garbled, { error: { code: 400, message: /adds/ } });
});
