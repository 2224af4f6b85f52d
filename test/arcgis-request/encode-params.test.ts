import t from 'tap';
import { encodeParams } from '../../src/arcgis-request/encode-params.js';

const fields = (form: URLSearchParams): [string, string][] => [...form.entries()];

t.test('strings are sent as they are', async (t) => {
  t.same(fields(encodeParams({ name: 'a b&c=d', empty: '' })), [
    ['name', 'a b&c=d'],
    ['empty', ''],
    ['f', 'json'],
  ]);
});

t.test('numbers become their decimal text', async (t) => {
  t.same(fields(encodeParams({ start: 26, num: 0, ratio: 1.5 })), [
    ['start', '26'],
    ['num', '0'],
    ['ratio', '1.5'],
    ['f', 'json'],
  ]);
});

t.test('booleans become true and false', async (t) => {
  t.same(fields(encodeParams({ active: true, syncEnabled: false })), [
    ['active', 'true'],
    ['syncEnabled', 'false'],
    ['f', 'json'],
  ]);
});

t.test('undefined and null are dropped', async (t) => {
  t.same(fields(encodeParams({ a: undefined, b: null, c: 'kept' })), [
    ['c', 'kept'],
    ['f', 'json'],
  ]);
});

t.test('arrays of strings become comma lists, as the ArcGIS API for Python sends changeTypes', async (t) => {
  t.same(fields(encodeParams({ changeTypes: ['FeaturesCreated', 'FeaturesDeleted'], one: ['*'] })), [
    ['changeTypes', 'FeaturesCreated,FeaturesDeleted'],
    ['one', '*'],
    ['f', 'json'],
  ]);
});

t.test('objects become JSON strings', async (t) => {
  const scheduleInfo = { name: 'every 5 s', recurrenceInfo: { interval: 5, frequency: 'second' } };
  const form = encodeParams({ scheduleInfo, updateDefinition: { capabilities: 'Query,Editing', syncEnabled: false } });
  t.same(JSON.parse(form.get('scheduleInfo')!), scheduleInfo);
  t.equal(form.get('updateDefinition'), '{"capabilities":"Query,Editing","syncEnabled":false}');
});

t.test('arrays of objects become JSON strings', async (t) => {
  const tolerations = [{ key: 'dedicated', operator: 'Equal', value: 'gis' }];
  t.equal(encodeParams({ tolerations }).get('tolerations'), JSON.stringify(tolerations));
});

t.test('f is always json, whatever the caller passes', async (t) => {
  t.same(fields(encodeParams()), [['f', 'json']]);
  t.same(encodeParams({ f: 'pjson' }).getAll('f'), ['json']);
});

t.test('the encoded form is application/x-www-form-urlencoded text', async (t) => {
  t.equal(
    encodeParams({ hookUrl: 'https://h/x?y=1', changeTypes: ['A', 'B'] }).toString(),
    'hookUrl=https%3A%2F%2Fh%2Fx%3Fy%3D1&changeTypes=A%2CB&f=json',
  );
});
