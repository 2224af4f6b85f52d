import { createHash } from 'node:crypto';
import {
  addAttachment,
  applyEdits,
  deleteAttachments,
  getAttachments,
  queryAttachments,
  updateAttachment,
} from '@esri/arcgis-rest-feature-service';
import { ApiKeyManager } from '@esri/arcgis-rest-request';
import t from 'tap';
import { catalogWithParcelsPage, startEmulator, type TestEmulator } from '../../helpers/emulator.js';
import { answerWith, startSink } from '../../helpers/http-sink.js';
import { waitFor } from '../../helpers/wait.js';

// Attachments as the product serves them (issue 55): the vendor's client reads and edits them unchanged, applyEdits
// takes them by GlobalID as Survey123 sends them, extractChanges returns them, and one control call submits an
// inspection the way Survey123 does.

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

const sides = [
  ['Enterprise', (emulator: TestEmulator) => `${emulator.url}/arcgis/rest/services/Hosted/Parcels/FeatureServer`],
  ['Online', (emulator: TestEmulator) => `${emulator.url}/geohookOrg/ArcGIS/rest/services/Parcels/FeatureServer`],
] as const;

/** Adds one parcel through the control applyEdits; its object id and GlobalID. */
async function addParcel(emulator: TestEmulator): Promise<{ objectId: number; globalId: string }> {
  const { body } = await emulator.control('services/Hosted/Parcels.FeatureServer/applyEdits', {
    edits: [{ id: 0, adds: [{ attributes: { parcel_id: 'P-1', status: 'Open' } }] }],
  });
  const [layer] = body.results as { addResults: { objectId: number; globalId: string }[] }[];
  return layer!.addResults[0]!;
}

for (const [side, serviceUrlOf] of sides) {
  t.test(`${side}: @esri/arcgis-rest-feature-service adds, reads, updates, queries and deletes a parcel's attachments`, async (t) => {
    const emulator = await startEmulator(t);
    const token = await emulator.token();
    const authentication = ApiKeyManager.fromKey(token);
    const url = `${serviceUrlOf(emulator)}/0`;
    const parcel = await addParcel(emulator);

    const layer = (await (await fetch(`${url}?f=json&token=${token}`)).json()) as Record<string, unknown>;
    t.equal(layer.hasAttachments, true, 'the layer says it has attachments');

    const photo = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3, 4, 5]);
    const added = await addAttachment({
      url,
      authentication,
      featureId: parcel.objectId,
      attachment: new File([photo], 'front door.jpg', { type: 'image/jpeg' }),
      params: { keywords: 'photos' },
    });
    t.match(added, { addAttachmentResult: { objectId: 1, globalId: /^\{[0-9A-F-]{36}\}$/, success: true } });

    const infos = await getAttachments({ url, authentication, featureId: parcel.objectId });
    t.same(infos.attachmentInfos, [
      {
        id: 1,
        globalId: added.addAttachmentResult.globalId,
        parentGlobalId: parcel.globalId,
        name: 'front door.jpg',
        contentType: 'image/jpeg',
        size: photo.length,
        keywords: 'photos',
        exifInfo: null,
      },
    ]);

    const bytes = await fetch(`${url}/${parcel.objectId}/attachments/1?token=${token}`);
    t.equal(bytes.status, 200);
    t.equal(bytes.headers.get('content-type'), 'image/jpeg', 'the bytes come with their content type');
    t.equal(sha256(new Uint8Array(await bytes.arrayBuffer())), sha256(photo), 'the bytes uploaded, exactly');

    const replaced = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 9, 9]);
    const updated = await updateAttachment({
      url,
      authentication,
      featureId: parcel.objectId,
      attachmentId: 1,
      attachment: new File([replaced], 'front door.png', { type: 'image/png' }),
    });
    t.match(updated, { updateAttachmentResult: { objectId: 1, globalId: added.addAttachmentResult.globalId, success: true } });
    const again = await fetch(`${url}/${parcel.objectId}/attachments/1?token=${token}`);
    t.equal(again.headers.get('content-type'), 'image/png');
    t.equal(sha256(new Uint8Array(await again.arrayBuffer())), sha256(replaced), 'the update replaced the bytes');

    const queried = await queryAttachments({ url, authentication, objectIds: [parcel.objectId], returnUrl: true });
    t.match(queried.attachmentGroups, [
      {
        parentObjectId: parcel.objectId,
        parentGlobalId: parcel.globalId,
        attachmentInfos: [{ id: 1, name: 'front door.png', size: replaced.length, url: `${url}/${parcel.objectId}/attachments/1` }],
      },
    ]);
    const none = await queryAttachments({ url, authentication, objectIds: [parcel.objectId], attachmentTypes: ['image/jpeg'] });
    t.same(none.attachmentGroups, [], 'attachmentTypes filters by content type');

    const deleted = await deleteAttachments({ url, authentication, featureId: parcel.objectId, attachmentIds: [1, 7] });
    t.match(deleted.deleteAttachmentResults, [
      { objectId: 1, globalId: added.addAttachmentResult.globalId, success: true },
      { objectId: 7, success: false, error: { code: 1011 } },
    ]);
    t.same((await getAttachments({ url, authentication, featureId: parcel.objectId })).attachmentInfos, []);
  });
}

t.test('attachments need a token, a feature that exists and a layer that takes them', async (t) => {
  const emulator = await startEmulator(t);
  const token = await emulator.token();
  const url = `${emulator.url}/arcgis/rest/services/Hosted/Parcels/FeatureServer`;
  const parcel = await addParcel(emulator);
  t.match(await (await fetch(`${url}/0/${parcel.objectId}/attachments?f=json`)).json(), { error: { code: 499 } });
  t.match(await (await fetch(`${url}/0/999/attachments?f=json&token=${token}`)).json(), { error: { code: 404 } });
  t.match(await (await fetch(`${url}/0/${parcel.objectId}/attachments/5?token=${token}`)).json(), { error: { code: 404 } });
  const roads = `${emulator.url}/arcgis/rest/services/Hosted/Roads/FeatureServer/0`;
  t.match(await (await fetch(`${roads}/queryAttachments?f=json&objectIds=1&token=${token}`)).json(), {
    error: { code: 400, message: 'Requested operation is not supported by this service.' },
  });
  t.match(await (await fetch(`${url}/0/queryAttachments?f=json&token=${token}`)).json(), {
    error: { code: 400, message: /objectIds/ },
  });
});

t.test('applyEdits with useGlobalIds adds a parcel and its photo in one call, and a deleted parcel takes its photos with it', async (t) => {
  const emulator = await startEmulator(t);
  const token = await emulator.token();
  const authentication = ApiKeyManager.fromKey(token);
  const url = `${emulator.url}/arcgis/rest/services/Hosted/Parcels/FeatureServer/0`;
  const parcel = '{11111111-2222-3333-4444-555555555555}';
  const photo = '{AAAAAAAA-2222-3333-4444-555555555555}';
  const data = Buffer.from('a photo of the parcel');
  const answer = await applyEdits({
    url,
    authentication,
    useGlobalIds: true,
    adds: [{ attributes: { globalid: parcel, parcel_id: 'P-1' } }],
    attachments: {
      adds: [{ globalId: photo, parentGlobalId: parcel, name: 'p.jpg', contentType: 'image/jpeg', data: data.toString('base64') }],
    },
  });
  t.same(answer.addResults, [{ objectId: 1, globalId: parcel, success: true }]);
  t.same(answer.attachments, {
    addResults: [{ objectId: 1, globalId: photo, success: true }],
    updateResults: [],
    deleteResults: [],
  });

  const orphan = await applyEdits({
    url,
    authentication,
    useGlobalIds: true,
    attachments: {
      adds: [
        {
          globalId: '{BBBBBBBB-2222-3333-4444-555555555555}',
          parentGlobalId: '{00000000-0000-0000-0000-000000000000}',
          name: 'x',
          contentType: 'image/jpeg',
          data: 'AA==',
        },
      ],
    },
  });
  t.match(orphan.attachments, { addResults: [{ objectId: -1, success: false, error: { code: 1011 } }] }, 'a photo needs its parent');

  const refused = await (
    await fetch(`${url}/applyEdits`, {
      method: 'POST',
      body: new URLSearchParams({ f: 'json', token, attachments: JSON.stringify({ deletes: [photo] }) }),
    })
  ).json();
  t.match(refused, { error: { code: 400, message: /useGlobalIds/ } }, 'attachments name their parents by GlobalID');

  const large = Buffer.alloc(2 * 1024 * 1024, 7);
  const big = await applyEdits({
    url,
    authentication,
    useGlobalIds: true,
    attachments: {
      adds: [
        {
          globalId: '{CCCCCCCC-2222-3333-4444-555555555555}',
          parentGlobalId: parcel,
          name: 'big.jpg',
          contentType: 'image/jpeg',
          data: large.toString('base64'),
        },
      ],
    },
  });
  t.match(big.attachments, { addResults: [{ success: true }] }, 'a 2 MB photo inline: edits take more than the 1 MB of other requests');

  await applyEdits({ url, authentication, useGlobalIds: true, deletes: [parcel] });
  const groups = await queryAttachments({ url, authentication, definitionExpression: '1=1' });
  t.same(groups.attachmentGroups, [], 'the photo went with its parcel');
});

t.test('extractChanges returns attachment changes with returnAttachments, by URL or inline, deletes by GlobalID', async (t) => {
  const emulator = await startEmulator(t);
  const token = await emulator.token();
  const service = `${emulator.url}/arcgis/rest/services/Hosted/Parcels/FeatureServer`;
  const parcel = await addParcel(emulator);
  const generation = async (): Promise<number> =>
    (
      (await (await fetch(`${service}?f=json&token=${token}`)).json()) as {
        changeTrackingInfo: { layerServerGens: { serverGen: number }[] };
      }
    ).changeTrackingInfo.layerServerGens[0]!.serverGen;
  const start = await generation();
  const upload = new FormData();
  upload.append('f', 'json');
  upload.append('token', token);
  upload.append('keywords', 'photos');
  upload.append('attachment', new File([Buffer.from('photo one')], 'one.jpg', { type: 'image/jpeg' }));
  const added = (await (await fetch(`${service}/0/${parcel.objectId}/addAttachment`, { method: 'POST', body: upload })).json()) as {
    addAttachmentResult: { objectId: number; globalId: string };
  };
  const extract = async (extra: Record<string, string>) =>
    (await (
      await fetch(`${service}/extractChanges`, {
        method: 'POST',
        body: new URLSearchParams({ f: 'json', token, serverGens: `[${start},${await generation()}]`, ...extra }),
      })
    ).json()) as { edits: { id: number; features: unknown; attachments?: Record<string, Record<string, unknown>[]> }[] };

  const byUrl = await extract({ returnAttachments: 'true' });
  t.same(
    byUrl.edits.map(({ id }) => id),
    [0],
    'the layer whose attachments changed',
  );
  t.same(byUrl.edits[0]!.attachments, {
    adds: [
      {
        attachmentId: added.addAttachmentResult.objectId,
        globalId: added.addAttachmentResult.globalId,
        parentGlobalId: parcel.globalId,
        name: 'one.jpg',
        contentType: 'image/jpeg',
        size: 9,
        keywords: 'photos',
        url: `${service}/0/${parcel.objectId}/attachments/${added.addAttachmentResult.objectId}`,
      },
    ],
    updates: [],
    deleteIds: [],
  });
  const inline = await extract({ returnAttachments: 'true', returnAttachmentsDataByUrl: 'false' });
  t.equal(
    Buffer.from(inline.edits[0]!.attachments!.adds![0]!.data as string, 'base64').toString(),
    'photo one',
    'inline: the bytes as base64',
  );
  const webhookStyle = await extract({ returnAttachments: 'false' });
  t.notOk('attachments' in webhookStyle.edits[0]!, 'a changesUrl with returnAttachments=false gets none');

  const beforeDelete = await generation();
  const deleted = new URLSearchParams({ f: 'json', token, attachmentIds: String(added.addAttachmentResult.objectId) });
  await fetch(`${service}/0/${parcel.objectId}/deleteAttachments`, { method: 'POST', body: deleted });
  const afterDelete = (await (
    await fetch(`${service}/extractChanges`, {
      method: 'POST',
      body: new URLSearchParams({ f: 'json', token, serverGens: `[${beforeDelete},${await generation()}]`, returnAttachments: 'true' }),
    })
  ).json()) as { edits: { attachments: unknown }[] };
  t.same(afterDelete.edits[0]!.attachments, { adds: [], updates: [], deleteIds: [added.addAttachmentResult.globalId] });
  const whole = await extract({ returnAttachments: 'true' });
  t.same(whole.edits[0]!.attachments, { adds: [], updates: [], deleteIds: [] }, 'added then deleted within the range: nothing');
});

t.test(
  'the control submission makes a parcel, two inspections and four photos in one generation, and POSTs the Survey123 payload',
  async (t) => {
    const emulator = await startEmulator(t);
    const sink = await startSink(t, answerWith(200));
    const token = await emulator.token();
    const service = `${emulator.url}/arcgis/rest/services/Hosted/Parcels/FeatureServer`;
    const { status, body } = await emulator.control('services/Hosted/Parcels.FeatureServer/submissions', {
      webhookUrl: `${sink.url}/survey123`,
    });
    t.equal(status, 200);
    const answer = body as {
      serverGen: number;
      parent: { layerId: number; objectId: number; globalId: string };
      related: { layerId: number; objectId: number; globalId: string }[];
      attachments: { id: number; layerId: number; parentGlobalId: string; sha256: string; size: number }[];
      webhook: { status: number };
    };
    t.equal(answer.parent.layerId, 0);
    t.equal(answer.related.length, 2);
    t.ok(answer.related.every((row) => row.layerId === 1));
    t.equal(answer.attachments.length, 4);
    t.ok(answer.attachments.every((photo) => photo.parentGlobalId === answer.parent.globalId && photo.size === 2048));

    for (const photo of answer.attachments) {
      const bytes = await fetch(`${service}/0/${answer.parent.objectId}/attachments/${photo.id}?token=${token}`);
      t.equal(sha256(new Uint8Array(await bytes.arrayBuffer())), photo.sha256, `photo ${photo.id}: the bytes submitted`);
    }

    const changes = (await (
      await fetch(`${service}/extractChanges`, {
        method: 'POST',
        body: new URLSearchParams({
          f: 'json',
          token,
          serverGens: `[${answer.serverGen - 1},${answer.serverGen}]`,
          returnAttachments: 'true',
        }),
      })
    ).json()) as {
      edits: { id: number; features: { adds: { attributes: Record<string, unknown> }[] }; attachments: { adds: unknown[] } }[];
    };
    t.same(
      changes.edits.map(({ id }) => id),
      [0, 1],
      'one generation holds the whole submission',
    );
    t.equal(changes.edits[0]!.features.adds.length, 1);
    t.equal(changes.edits[0]!.attachments.adds.length, 4);
    t.same(
      changes.edits[1]!.features.adds.map(({ attributes }) => attributes.parcel_guid),
      [answer.parent.globalId, answer.parent.globalId],
      'the inspections are keyed to their parcel',
    );

    t.equal(answer.webhook.status, 200);
    t.equal(sink.received.length, 1);
    t.equal(sink.received[0]!.headers['content-type'], 'application/json');
    const payload = JSON.parse(sink.received[0]!.body.toString()) as {
      eventType: string;
      applyEdits: { id: number; attachments?: { adds: Record<string, unknown>[] } }[];
      feature: {
        result: { globalId: string; objectId: number };
        layerInfo: { id: number; relationships: unknown[] };
        attachments: Record<string, { id: number }[]>;
        repeats: Record<string, unknown[]>;
      };
      surveyInfo: Record<string, unknown>;
      portalInfo: { url: string; token: string };
      userInfo: { username: string };
    };
    t.equal(payload.eventType, 'addData');
    t.same(payload.feature.result, {
      globalId: answer.parent.globalId,
      objectId: answer.parent.objectId,
      uniqueId: answer.parent.objectId,
      success: true,
    });
    t.equal(payload.feature.layerInfo.relationships.length, 1);
    t.equal(payload.feature.attachments.photos!.length, 4, 'attachments by question (keyword)');
    t.equal(payload.feature.repeats.Inspections!.length, 2, 'repeats by table');
    t.notOk('data' in payload.applyEdits[0]!.attachments!.adds[0]!, 'the payload carries no photo bytes');
    t.match(payload.surveyInfo, { formItemId: /^[0-9a-f]{32}$/, serviceUrl: service });
    t.equal(payload.portalInfo.url, `${emulator.url}/arcgis`);
    t.equal(payload.userInfo.username, 'admin');
    const withToken = await (
      await fetch(`${service}/0/${answer.parent.objectId}/attachments?f=json&token=${payload.portalInfo.token}`)
    ).json();
    t.match(withToken, { attachmentInfos: [{}, {}, {}, {}] }, "portalInfo.token is the user's valid token");
  },
);

t.test('a submission names its photos, puts them on related rows, and is refused for bad input', async (t) => {
  const emulator = await startEmulator(t);
  const path = 'services/Hosted/Parcels.FeatureServer/submissions';
  const { body } = await emulator.control(path, {
    related: 1,
    photos: [{ name: 'meter.png', contentType: 'image/png', keywords: 'meter', data: Buffer.from('png').toString('base64'), on: 0 }],
  });
  const answer = body as {
    related: { globalId: string }[];
    attachments: { layerId: number; parentGlobalId: string; name: string; keywords: string }[];
  };
  t.match(answer.attachments, [{ layerId: 1, parentGlobalId: answer.related[0]!.globalId, name: 'meter.png', keywords: 'meter' }]);
  t.match(await emulator.control(path, { photos: 'many' }), { status: 400, body: { messages: [/photos/] } });
  t.match(await emulator.control(path, { photos: [{ on: 3 }] }), { status: 400, body: { messages: [/photos\[0\]\.on/] } });
  t.match(await emulator.control(path, { webhookUrl: 'ftp://x' }), { status: 400, body: { messages: [/webhookUrl/] } });
});

t.test('attachment edits fire the Attachments change types, once per call, beside the features a submission makes', async (t) => {
  const emulator = await startEmulator(t);
  const sink = await startSink(t, answerWith(200));
  const service = 'services/Hosted/Parcels.FeatureServer';
  await emulator.admin(`${service}/webhooks/create`, { name: 'all', hookUrl: `${sink.url}/all`, changeTypes: '*', active: 'true' });
  await emulator.admin(`${service}/webhooks/create`, {
    name: 'photos',
    hookUrl: `${sink.url}/photos`,
    changeTypes: 'AttachmentsCreated,AttachmentsDeleted',
    active: 'true',
  });
  const { body } = await emulator.control(`${service}/submissions`, {});
  t.equal((body.deliveries as string[]).length, 2, 'one delivery per webhook for the whole submission');
  const received = await waitFor('two deliveries', () => sink.received.length >= 2 && sink.received);
  const types = Object.fromEntries(
    received.map((request) => [
      request.url,
      (JSON.parse(request.body.toString()) as { events: { eventType: string }[] }).events.map((event) => event.eventType),
    ]),
  );
  t.same(types['/all'], ['FeaturesCreated', 'AttachmentsCreated']);
  t.same(types['/photos'], ['AttachmentsCreated']);

  const parent = (body as { parent: { globalId: string } }).parent.globalId;
  const deleted = await emulator.control(`${service}/applyEdits`, { useGlobalIds: true, edits: [{ id: 0, deletes: [parent] }] });
  t.equal((deleted.body.deliveries as string[]).length, 2, "a parcel's delete takes its photos: AttachmentsDeleted fires too");
  const after = await waitFor('four deliveries', () => sink.received.length >= 4 && sink.received);
  const photos = after.filter((request) => request.url === '/photos').at(-1)!;
  t.same(
    (JSON.parse(photos.body.toString()) as { events: { eventType: string }[] }).events.map((event) => event.eventType),
    ['AttachmentsDeleted'],
  );
});

t.test('queryAttachments pages over attachments by resultOffset and resultRecordCount within maxRecordCount', async (t) => {
  const emulator = await startEmulator(t, { catalog: catalogWithParcelsPage(3) });
  const url = `${emulator.url}/arcgis/rest/services/Hosted/Parcels/FeatureServer/0`;
  const authentication = ApiKeyManager.fromKey(await emulator.token());
  const parcels = [await addParcel(emulator), await addParcel(emulator)];
  for (const [index, parcel] of [0, 0, 0, 1, 1].map((n) => parcels[n]!).entries())
    await addAttachment({ url, authentication, featureId: parcel.objectId, attachment: new File([`photo ${index}`], `p${index}.jpg`) });
  const page = async (params: Record<string, string>) => {
    const query = new URLSearchParams({ definitionExpression: '1=1', f: 'json', token: await emulator.token(), ...params });
    const answer = (await (await fetch(`${url}/queryAttachments?${query.toString()}`)).json()) as {
      attachmentGroups: { parentObjectId: number; attachmentInfos: { id: number }[] }[];
      exceededTransferLimit?: boolean;
    };
    return {
      ids: answer.attachmentGroups.map((group) => `${group.parentObjectId}:${group.attachmentInfos.map((info) => info.id).join(',')}`),
      more: answer.exceededTransferLimit === true,
    };
  };
  const [a, b] = parcels.map((parcel) => parcel.objectId) as [number, number];
  t.same(await page({}), { ids: [`${a}:1,2,3`], more: true }, 'no paging asked: the first maxRecordCount, and more remain');
  t.same(await page({ resultOffset: '3' }), { ids: [`${b}:4,5`], more: false }, 'the rest');
  t.same(
    await page({ resultOffset: '2', resultRecordCount: '2' }),
    { ids: [`${a}:3`, `${b}:4`], more: true },
    'a page across two features',
  );
  t.same(await page({ resultRecordCount: '10' }), { ids: [`${a}:1,2,3`], more: true }, 'never past maxRecordCount');
  t.same(await page({ resultOffset: '5' }), { ids: [], more: false }, 'past the end: nothing');
});
