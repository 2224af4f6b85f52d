import t from 'tap';
import { decodePayloadUrl, changesLocationOf, serverGensOf } from '../../src/arcgis/changes-url.js';

const PLAIN = 'https://services.arcgis.com/org/ArcGIS/rest/services/Parcels/FeatureServer/extractChanges?serverGens=[10,12]&async=true';

t.test('a changesUrl is read plain, percent-encoded as a whole (either case), or with serverGens encoded inside', async (t) => {
  const encoded = encodeURIComponent(PLAIN);
  const cases: Array<[string, string]> = [
    ['plain', PLAIN],
    ['encoded, upper-case hex', encoded],
    ['encoded, lower-case hex', encoded.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase())],
    ['serverGens encoded inside', PLAIN.replace('[10,12]', '%5B10%2C12%5D')],
    ['surrounded by spaces', `  ${PLAIN} `],
  ];
  for (const [what, value] of cases) {
    t.match(
      changesLocationOf({ changesUrl: value, layerId: 3 }),
      { serverGens: [10, 12], layerId: 3, url: /^https:\/\/services\.arcgis\.com\/org\// },
      what,
    );
  }
});

t.test('no changes without a usable changesUrl and serverGens range', async (t) => {
  for (const item of [
    undefined,
    null,
    [],
    'text',
    {},
    { changesUrl: 42 },
    { changesUrl: 'not a url' },
    { changesUrl: 'ftp://host/extractChanges?serverGens=[1,2]' },
    { changesUrl: 'https%3a%2f%2fhost.example%ABCD%2fextractChanges%3fserverGens%3d%5b1%2c2%5d' },
    { changesUrl: 'https://host/extractChanges' },
    { changesUrl: 'https://host/extractChanges?serverGens=[2,1]' },
    { changesUrl: 'https://host/extractChanges?serverGens=[1]' },
    { changesUrl: 'https://host/extractChanges?serverGens=[-1,2]' },
    { changesUrl: 'https://host/extractChanges?serverGens=[1.5,2]' },
    { changesUrl: 'https://host/extractChanges?serverGens=1,2' },
  ]) {
    t.equal(changesLocationOf(item), undefined, JSON.stringify(item) ?? 'undefined');
  }
});

t.test('layerId is kept only as a whole number', async (t) => {
  t.same(changesLocationOf({ changesUrl: PLAIN }), { url: PLAIN, serverGens: [10, 12] });
  t.same(changesLocationOf({ changesUrl: PLAIN, layerId: '0' }), { url: PLAIN, serverGens: [10, 12] });
  t.same(changesLocationOf({ changesUrl: PLAIN, layerId: 0 }), { url: PLAIN, serverGens: [10, 12], layerId: 0 });
});

t.test('decodePayloadUrl and serverGensOf', async (t) => {
  t.equal(decodePayloadUrl('http%3A%2F%2Fh%2Fx')?.href, 'http://h/x');
  t.equal(decodePayloadUrl('javascript:alert(1)'), undefined);
  t.same(serverGensOf(new URL('https://h/?serverGens=%5B0%2C0%5D')), [0, 0]);
  t.equal(serverGensOf(new URL('https://h/?serverGens=[1,2,3]')), undefined);
});
