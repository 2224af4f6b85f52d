import fc from 'fast-check';
import t from 'tap';
import { keyedExactParser } from '../../src/arcgis-request/parse-exact-json.js';
import { genericLayers, parcelsLayers } from '../../src/emulator/features/layer-schemas.js';
import type { MirrorLayer } from '../../src/mirror/column-types.js';
import { copyLine, copyText, escapesNone } from '../../src/mirror/copy-text.js';
import { encodePage } from '../../src/mirror/encode-page.js';
import { rowColumnsOf, type EsriRow } from '../../src/mirror/row-values.js';

/** A page's lines as the rows' COPY lines, joined and encoded in one piece. */
const expectedLines = (layer: MirrorLayer, rows: readonly EsriRow[]): Buffer =>
  Buffer.from(rows.map((row) => copyLine(rowColumnsOf(layer).values(row))).join(''));

t.test("a page's lines are its rows' COPY lines as UTF-8, whatever their characters", async (t) => {
  const parcels = parcelsLayers()[0] as MirrorLayer;
  const rings = [
    [
      [0, 0],
      [0, 1],
      [1, 1],
      [0, 0],
    ],
  ];
  const owners = ['plain', 'tab\there', 'newline\nback\\slash', 'ümlaut', '𝔾 beyond the BMP', '中文'];
  const features = owners.map((owner, index) => ({ attributes: { objectid: index + 1, owner }, geometry: { rings } }));
  const text = JSON.stringify({ objectIdFieldName: 'objectid', features });
  const page = encodePage(text, keyedExactParser([]), rowColumnsOf(parcels), 'objectid');
  t.match(page, { rows: owners.length, lastObjectId: owners.length, root: { objectIdFieldName: 'objectid' } });
  t.same(Buffer.from(page.lines), expectedLines(parcels, features));
  t.equal(page.lines.byteOffset, 0, 'the lines start their array buffer (it is handed over whole)');
});

t.test('lines longer than the answer (points: a few bytes of JSON, 50 of hex EWKB) grow their buffer', async (t) => {
  const points = genericLayers('Points')[0] as MirrorLayer;
  const features = Array.from({ length: 3000 }, (_, index) => ({ attributes: { objectid: index + 1 }, geometry: { x: index, y: 1 } }));
  const text = JSON.stringify({ features });
  const page = encodePage(text, keyedExactParser([]), rowColumnsOf(points), 'objectid');
  t.ok(page.lines.length > text.length, `${page.lines.length} bytes of lines from ${text.length} characters of JSON`);
  t.same(Buffer.from(page.lines), expectedLines(points, features));
});

t.test('a page whose JSON has no backslash is written without looking at its values, to the same lines', async (t) => {
  const parcels = parcelsLayers()[0] as MirrorLayer;
  const owners = ['plain', 'ümlaut', '𝔾 beyond the BMP', '中文', null];
  const features = owners.map((owner, index) => ({ attributes: { objectid: index + 1, owner }, geometry: null }));
  const text = JSON.stringify({ features });
  t.ok(escapesNone(text));
  const page = encodePage(text, keyedExactParser([]), rowColumnsOf(parcels), 'objectid');
  t.same(Buffer.from(page.lines), expectedLines(parcels, features), 'NULL is \\N, the rest as the escaping path writes it');
});

t.test('a string JSON writes without a backslash holds no character COPY escapes', async (t) => {
  fc.assert(fc.property(fc.string({ unit: 'binary' }), (value) => !escapesNone(JSON.stringify({ value })) || copyText(value) === value));
  t.notOk(escapesNone(JSON.stringify({ value: 'tab\there' })), 'a tab is written with a backslash');
});
