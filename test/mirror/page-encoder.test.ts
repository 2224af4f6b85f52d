import t from 'tap';
import { trustedUrls } from '../../src/arcgis/trusted-urls.js';
import { createServiceSession } from '../../src/arcgis-request/service-session.js';
import { parcelsLayers } from '../../src/emulator/features/layer-schemas.js';
import { AdminApiError } from '../../src/errors.js';
import type { MirrorLayer } from '../../src/mirror/column-types.js';
import { createPageEncoder } from '../../src/mirror/page-encoder.js';
import { rowColumnsOf } from '../../src/mirror/row-values.js';
import { startSink } from '../helpers/http-sink.js';

const parcels = parcelsLayers()[0] as MirrorLayer;
const feature = {
  attributes: { objectid: 7, globalid: '{545EA916-2E5D-4152-A753-CFB7DBC7DB6D}', owner: 'a\tb', assessed_value: 'BIG' },
  geometry: {
    rings: [
      [
        [0, 0],
        [0, 1],
        [1, 1],
        [1, 0],
        [0, 0],
      ],
    ],
  },
};
/** What the sink answers at each path. */
const answers: Record<string, string> = {
  '/page': JSON.stringify({ objectIdFieldName: 'objectid', features: [feature] }).replace('"BIG"', '9007199254740993'),
  '/error': JSON.stringify({ error: { code: 400, message: 'Invalid query', details: [] } }),
  '/not-json': 'Service unavailable',
  '/array': '[]',
  '/bad-row': JSON.stringify({ features: [{ attributes: { objectid: 8 }, geometry: { paths: [] } }] }),
  '/redirect': '',
};

t.test('pages read on the encoder thread: COPY lines, BigInteger exact; errors are the bad answer’s, on the caller', async (t) => {
  const sink = await startSink(t, (request, response) => {
    const path = new URL(request.url ?? '/', 'http://x').pathname;
    if (path === '/redirect') return response.writeHead(302, { location: '/page' }).end();
    response.writeHead(200, { 'content-type': 'application/json' }).end(answers[path]);
  });
  const session = createServiceSession({ trusted: trustedUrls([`${sink.url}/`]), auth: { token: 'the-token' } });
  const encoder = createPageEncoder();
  t.teardown(() => encoder.close());
  const pages = encoder.of(parcels);

  const page = await pages.read(session, new URL(`${sink.url}/page`));
  t.match(page, { rows: 1, lastObjectId: 7, root: { objectIdFieldName: 'objectid' } });
  t.notOk('features' in page.root, 'the features are not kept as values');
  const columns = new TextDecoder().decode(page.lines).trimEnd().split('\t');
  t.equal(columns[0], '7');
  t.ok(columns.includes('9007199254740993'), 'the BigInteger value with every digit');
  t.ok(columns.includes('a\\tb'), 'text escaped for COPY');
  t.same(pages.extent(page), { rows: 1, lastObjectId: 7 });

  await t.rejects(pages.read(session, new URL(`${sink.url}/error`)), { name: 'AdminApiError', message: /Invalid query/ });
  const notJson = await pages.read(session, new URL(`${sink.url}/not-json`)).catch((err: unknown) => err);
  t.ok(notJson instanceof AdminApiError);
  t.match(notJson, { message: /\/not-json: the answer is not JSON/ });
  await t.rejects(pages.read(session, new URL(`${sink.url}/bad-row`)), { name: 'AdminApiError', message: /rings/ });
  await t.rejects(pages.read(session, new URL(`${sink.url}/array`)), {
    name: 'AdminApiError',
    message: /\/array: the answer is not a JSON object/,
  });
  await t.rejects(pages.read(session, new URL(`${sink.url}/redirect`)), { message: /redirected \(HTTP 302\).*not followed/ });
  await t.rejects(
    pages.read(session, new URL('http://elsewhere.example/page')),
    { code: 'GEOHOOK_ERR_UNTRUSTED_URL' },
    'an untrusted URL is refused, unsent',
  );
  t.ok(
    sink.received.every((request) => request.body.toString().includes('token=the-token')),
    'each request carries the token',
  );
  const after = await pages.read(session, new URL(`${sink.url}/page`));
  t.equal(after.rows, 1, 'the thread goes on after a bad answer');
});

t.test('a closed encoder refuses pages', async (t) => {
  const sink = await startSink(t, (_request, response) => response.writeHead(200).end(answers['/page']));
  const session = createServiceSession({ trusted: trustedUrls([`${sink.url}/`]), auth: { token: 'the-token' } });
  const encoder = createPageEncoder();
  await encoder.close();
  await t.rejects(encoder.of(parcels).read(session, new URL(`${sink.url}/page`)), /page encoder's thread exited/);
});

t.test('a page that arrives in many chunks is encoded whole, its rows in order', async (t) => {
  const features = Array.from({ length: 3000 }, (_, index) => ({
    attributes: { ...feature.attributes, objectid: index + 1, owner: `owner ${index + 1}` },
    geometry: feature.geometry,
  }));
  const body = Buffer.from(JSON.stringify({ objectIdFieldName: 'objectid', features }).replaceAll('"BIG"', '9007199254740993'));
  const sink = await startSink(t, (_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    // Written a piece at a time, each piece a chunk of its own: the body is gathered from all of them.
    const pieces = Array.from({ length: Math.ceil(body.length / 7919) }, (_, index) => body.subarray(index * 7919, (index + 1) * 7919));
    const next = (): void => void (pieces.length === 0 ? response.end() : response.write(pieces.shift(), () => setImmediate(next)));
    next();
  });
  const session = createServiceSession({ trusted: trustedUrls([`${sink.url}/`]), auth: { token: 'the-token' } });
  const encoder = createPageEncoder();
  t.teardown(() => encoder.close());
  const page = await encoder.of(parcels).read(session, new URL(`${sink.url}/page`));
  t.match(page, { rows: 3000, lastObjectId: 3000 });
  const lines = new TextDecoder().decode(page.lines).trimEnd().split('\n');
  t.same(
    lines.map((line) => line.split('\t')[0]),
    features.map(({ attributes }) => String(attributes.objectid)),
    'every row, in order',
  );
  t.ok(
    lines.every((line, index) => line.includes(`\towner ${index + 1}\t`) && line.includes('\t9007199254740993\t')),
    'each with its values',
  );
});

t.test('one thread encodes the pages of several layers, each into its own columns', async (t) => {
  const [parcelsLayer, inspections] = parcelsLayers() as MirrorLayer[] as [MirrorLayer, MirrorLayer];
  const row = { attributes: { objectid: 3, inspector: 'ana', result: 'pass' } };
  const bodies: Record<string, string> = {
    '/parcels': answers['/page']!,
    '/inspections': JSON.stringify({ objectIdFieldName: 'objectid', features: [row] }),
  };
  const sink = await startSink(t, (request, response) =>
    response.writeHead(200).end(bodies[new URL(request.url ?? '/', 'http://x').pathname]),
  );
  const session = createServiceSession({ trusted: trustedUrls([`${sink.url}/`]), auth: { token: 'the-token' } });
  const encoder = createPageEncoder();
  t.teardown(() => encoder.close());
  const columnsOf = async (layer: MirrorLayer, path: string): Promise<string[]> =>
    new TextDecoder()
      .decode((await encoder.of(layer).read(session, new URL(`${sink.url}${path}`))).lines)
      .trimEnd()
      .split('\t');
  for (let round = 0; round < 2; round += 1) {
    const parcelColumns = await columnsOf(parcelsLayer, '/parcels');
    t.equal(parcelColumns.length, rowColumnsOf(parcelsLayer).names.length, `round ${round}: a parcel has the Parcels columns`);
    t.ok(parcelColumns.includes('9007199254740993'), `round ${round}: its BigInteger exact`);
    const inspectionColumns = await columnsOf(inspections, '/inspections');
    t.equal(inspectionColumns.length, rowColumnsOf(inspections).names.length, `round ${round}: an inspection has the Inspections columns`);
    t.ok(inspectionColumns.includes('ana') && inspectionColumns.includes('pass'), `round ${round}: its values`);
  }
});
