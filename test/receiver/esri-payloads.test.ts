import { createHash } from 'node:crypto';
import t from 'tap';
import { sign } from '../../src/signature/sign.js';
import { eventOf } from '../helpers/envelope.js';
import { fixture } from '../helpers/paths.js';
import { startReceiver, TEST_KEY, type TestReceiver } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';

// Every real payload of test/fixtures/esri (README there), delivered as its product sends it and signed as
// Esri's own sample receivers verify: accepted, classified, and kept byte for byte.

const redis = await startRedis(t);
const JSON_TYPE = { 'content-type': 'application/json' };
const FORM_TYPE = { 'content-type': 'application/x-www-form-urlencoded' };
const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');
const esri = (name: string): Buffer => fixture(`esri/${name}`);

interface Case {
  name: string;
  /** The body as delivered. */
  body: Buffer;
  headers: Record<string, string>;
  family: 'feature' | 'unknown';
  types: string[];
  serviceName?: string;
  /** `changes` of the envelope: the range and layer its changesUrl names, decoded whatever the encoding. */
  changes?: { serverGens: [number, number]; layerId?: number };
}

/** A form delivery of ArcGIS Online: `payload=` and the JSON as sent, not form-encoded. */
const asForm = (json: Buffer): Buffer => Buffer.concat([Buffer.from('payload='), json]);

const cases: Case[] = [
  {
    name: 'Enterprise feature service, JSON',
    body: esri('esri-webhookssamples-enterprise-fs-FeaturesCreated.json'),
    headers: JSON_TYPE,
    family: 'feature',
    types: ['feature.FeaturesCreated'],
    changes: { serverGens: [1730385704442, 1730385704443] },
  },
  {
    name: 'ArcGIS Online, JSON array (developers.arcgis.com)',
    body: esri('esri-devdocs-agol-FeaturesCreated.json'),
    headers: JSON_TYPE,
    family: 'feature',
    types: ['feature.FeaturesCreated'],
    changes: { serverGens: [21891591, 25166741], layerId: 0 },
  },
  {
    name: 'ArcGIS Online, form with three events and a %AB that is not UTF-8 (doc.arcgis.com)',
    body: esri('esri-docarcgis-agol-FeaturesCreated-FeaturesUpdated-FeaturesDeleted.form.txt'),
    headers: FORM_TYPE,
    family: 'feature',
    types: ['feature.FeaturesCreated', 'feature.FeaturesUpdated', 'feature.FeaturesDeleted'],
    serviceName: 'myservice',
  },
  {
    name: 'ArcGIS Online, JSON array with a percent-encoded changesUrl (AWS Lambda receiver)',
    body: esri('thirdparty-awslambda-agol-FeaturesCreated.json'),
    headers: JSON_TYPE,
    family: 'feature',
    types: ['feature.FeaturesCreated'],
    changes: { serverGens: [1404636, 1404640], layerId: 0 },
  },
  {
    name: 'ArcGIS Online, form (Azure Function receiver)',
    body: asForm(esri('thirdparty-azurefn-viirs-agol-FeaturesCreated.json')),
    headers: FORM_TYPE,
    family: 'feature',
    types: ['feature.FeaturesCreated'],
    changes: { serverGens: [1023777, 1023783], layerId: 0 },
  },
  {
    name: 'ArcGIS Online, form with features and attachments created (Esri Nederland receiver)',
    // The decoded field: its changesUrl holds a raw `&`, so the form carried it percent-encoded.
    body: Buffer.from(
      `payload=${encodeURIComponent(esri('thirdparty-esrinl-sss2020-agol-FeaturesCreated-AttachmentsCreated.json').toString())}`,
    ),
    headers: FORM_TYPE,
    family: 'feature',
    types: ['feature.FeaturesCreated', 'feature.AttachmentsCreated'],
    serviceName: 'SelfServiceStoryMapping2020_Input',
    changes: { serverGens: [46245100, 46245124], layerId: 0 },
  },
  {
    name: 'a Portal organization webhook, which is not a service webhook',
    body: esri('esri-devdocs-portal-org-item-share.json'),
    headers: JSON_TYPE,
    family: 'unknown',
    types: ['unknown'],
  },
];

async function storedJob(receiver: TestReceiver, family: Case['family'], id: string) {
  const job = await receiver.app.eventQueue.queue(`${family}-events`).getJob(id);
  if (job === undefined) throw new Error(`no job ${id} in ${family}-events`);
  return { data: eventOf(job) };
}

t.test('each real payload, signed in x-esriHook-Signature, is accepted, classified and kept byte for byte', async (t) => {
  const receiver = await startReceiver(t, redis);
  for (const c of cases) {
    const response = await receiver.post(c.body, { ...c.headers, 'x-esriHook-Signature': sign(TEST_KEY, c.body) });
    t.equal(response.status, 202, `${c.name}: accepted`);
    const job = await storedJob(receiver, c.family, sha256(c.body));
    t.same(job.data.types, c.types, `${c.name}: ${c.types.join(', ')}`);
    t.equal(Buffer.compare(Buffer.from(job.data.rawBody, 'base64'), c.body), 0, `${c.name}: the exact bytes`);
    t.equal(job.data.verified, true);
    if (c.serviceName !== undefined) t.equal(job.data.service.serviceName, c.serviceName, `${c.name}: the service`);
    if (c.changes === undefined) t.notOk('changes' in job.data, `${c.name}: no changes`);
    else {
      t.same(
        { serverGens: job.data.changes?.serverGens, layerId: job.data.changes?.layerId },
        { layerId: undefined, ...c.changes },
        `${c.name}: changes`,
      );
      t.match(job.data.changes?.url, /^https:\/\/[^%]+\/FeatureServer\/extractChanges\?serverGens=/, `${c.name}: the URL decoded`);
    }
  }
});

t.test('each real form payload, signed in its form field as Esri samples verify it, is accepted and classified', async (t) => {
  const receiver = await startReceiver(t, redis);
  for (const c of cases.filter((candidate) => candidate.headers === FORM_TYPE)) {
    // Esri's Azure sample: the HMAC of the raw bytes between `payload=` and `&`, in a URL-encoded field.
    const raw = c.body.subarray('payload='.length);
    const body = Buffer.concat([c.body, Buffer.from(`&x-esriHook-Signature=${encodeURIComponent(sign(TEST_KEY, raw))}`)]);
    t.equal((await receiver.post(body, c.headers)).status, 202, `${c.name}: accepted`);
    const job = await storedJob(receiver, c.family, sha256(body));
    t.same(job.data.types, c.types, `${c.name}: classified`);
    t.equal(Buffer.compare(Buffer.from(job.data.rawBody, 'base64'), body), 0, `${c.name}: the exact bytes`);
  }
});

t.test('each real payload is refused when the signature is over other bytes', async (t) => {
  const receiver = await startReceiver(t, redis);
  for (const c of cases) {
    const response = await receiver.post(c.body, {
      ...c.headers,
      'x-esriHook-Signature': sign(TEST_KEY, Buffer.concat([c.body, Buffer.from(' ')])),
    });
    t.equal(response.status, 401, `${c.name}: refused`);
  }
});
