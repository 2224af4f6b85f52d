import t from 'tap';
import { EditBatch } from '../../../src/emulator/features/apply-edits.js';
import { LayerAttachments, type Attachment } from '../../../src/emulator/features/attachments.js';
import { ChangeLog } from '../../../src/emulator/features/change-log.js';
import { parseExactJson, stringifyExact } from '../../../src/emulator/features/exact-json.js';
import { FeatureLayer } from '../../../src/emulator/features/feature-layer.js';
import { fieldValue } from '../../../src/emulator/features/field-values.js';
import { field, parcelsLayers } from '../../../src/emulator/features/layer-schemas.js';
import { sampleFeature } from '../../../src/emulator/features/sample-features.js';

t.test('exact JSON keeps integers beyond 2^53 as bigint and writes them back as bare numbers', async (t) => {
  const parsed = parseExactJson('{"a":9007199254740993,"b":1.5,"c":42,"d":"9007199254740993"}') as Record<string, unknown>;
  t.same(parsed, { a: 9007199254740993n, b: 1.5, c: 42, d: '9007199254740993' });
  t.equal(stringifyExact(parsed), '{"a":9007199254740993,"b":1.5,"c":42,"d":"9007199254740993"}');
  t.equal(stringifyExact({ n: -123456789012345678901n }), '{"n":-123456789012345678901}');
  t.equal(stringifyExact({ s: 'bigint-x:1' }), '{"s":"bigint-x:1"}', 'a string that looks like the marker stays a string');
  t.throws(() => parseExactJson('{"a":'), SyntaxError);
  t.throws(() => parseExactJson('['.repeat(100_000)), SyntaxError, 'deep nesting is malformed input, not a crash');
  t.equal(Object.getPrototypeOf(parseExactJson('{"__proto__":{"x":1}}')), Object.prototype, '__proto__ is an own key');
});

t.test('field values: types, lengths, domains and nulls as the feature service checks them', async (t) => {
  const status = field('status', 'esriFieldTypeString', {
    length: 10,
    domain: { type: 'codedValue', name: 'S', codedValues: [{ name: 'Open', code: 'Open' }] },
  });
  t.same(fieldValue(status, 'Open'), { value: 'Open' });
  t.same(fieldValue(status, 'Closed'), { error: { code: 1016, description: 'Setting of value for status failed.' } });
  t.same(fieldValue(field('name', 'esriFieldTypeString', { length: 3 }), 'abcd'), {
    error: { code: 1016, description: 'Setting of value for name failed.' },
  });
  t.same(fieldValue(field('lanes', 'esriFieldTypeSmallInteger'), 40_000), {
    error: { code: 1016, description: 'Setting of value for lanes failed.' },
  });
  t.same(fieldValue(field('lanes', 'esriFieldTypeSmallInteger'), 4), { value: 4 });
  t.same(fieldValue(field('v', 'esriFieldTypeBigInteger'), '9223372036854775807'), { value: 9223372036854775807n });
  t.match(fieldValue(field('v', 'esriFieldTypeBigInteger'), '9223372036854775808'), { error: { code: 1016 } }, 'beyond 64 bits');
  t.same(fieldValue(field('day', 'esriFieldTypeDateOnly'), '2026-02-28'), { value: '2026-02-28' });
  t.match(fieldValue(field('day', 'esriFieldTypeDateOnly'), '2026-02-30'), { error: { code: 1016 } });
  t.same(fieldValue(field('g', 'esriFieldTypeGUID'), 'a1b2c3d4-0000-4000-8000-00000000000f'), {
    value: '{A1B2C3D4-0000-4000-8000-00000000000F}',
  });
  t.same(fieldValue(field('n', 'esriFieldTypeString', { nullable: false }), null), {
    error: { code: 1001, description: 'Field: n is not nullable. Cannot set null value.' },
  });
});

t.test('the change log answers ranges and forgets whole generations only', async (t) => {
  const log = new ChangeLog(3);
  const row = { attributes: {}, geometry: null };
  const entry = (serverGen: number, objectId: number) => ({ serverGen, objectId, globalId: `{${objectId}}`, op: 'add' as const, row });
  for (const objectId of [1, 2]) log.append(entry(10, objectId));
  for (const objectId of [3, 4, 5]) log.append(entry(20, objectId));
  log.trim();
  t.same(
    log.between(0, 30).map(({ objectId }) => objectId),
    [3, 4, 5],
    'generation 10 forgotten whole',
  );
  t.equal(log.forgottenUpTo, 10);
  log.append(entry(30, 6));
  log.append(entry(30, 7));
  log.append(entry(30, 8));
  log.append(entry(30, 9));
  log.trim();
  t.same(
    log.between(20, 30).map(({ objectId }) => objectId),
    [6, 7, 8, 9],
    'a generation larger than the bound is kept whole',
  );
  t.same(log.between(25, 29), []);
  t.throws(() => log.append(entry(5, 10)), RangeError);
});

/** An attachment of feature `parentObjectId` (1 unless given), named after its id unless given, of `bytes` bytes (8). */
function attachmentOf(id: number, { parentObjectId = 1, name = `${id}.jpg`, bytes = 8 } = {}): Attachment {
  return {
    id,
    globalId: `{0000000${id}-0000-4000-8000-000000000000}`,
    parentObjectId,
    parentGlobalId: '{}',
    name,
    contentType: 'image/jpeg',
    keywords: '',
    data: Buffer.alloc(bytes),
  };
}

t.test("a feature's attachments are listed under it, in the order of their ids, through updates and deletes", async (t) => {
  const attachments = new LayerAttachments();
  const names = (parent: number) => attachments.of(parent).map(({ name }) => name);
  attachments.change('add', attachmentOf(1, { parentObjectId: 7 }), 10);
  attachments.change('add', attachmentOf(2, { parentObjectId: 7 }), 10);
  attachments.change('add', attachmentOf(3, { parentObjectId: 8 }), 10);
  attachments.change('update', attachmentOf(1, { parentObjectId: 7, name: 'replaced.jpg' }), 20);
  t.same(names(7), ['replaced.jpg', '2.jpg'], 'an update keeps its place');
  t.same(names(8), ['3.jpg']);
  attachments.change('delete', attachmentOf(2, { parentObjectId: 7 }), 30);
  t.same(names(7), ['replaced.jpg']);
  attachments.change('delete', attachmentOf(1, { parentObjectId: 7, name: 'replaced.jpg' }), 40);
  t.same(names(7), [], 'none left');
  t.same(names(9), [], 'a feature without any');
});

t.test(
  "a layer's attachment versions past its bound of bytes: the oldest generations are forgotten, its features' with them",
  async (t) => {
    const definition = parcelsLayers().find((layer) => layer.hasAttachments === true)!;
    const layer = new FeatureLayer(definition, new ChangeLog(), 100);
    const edit = (serverGen: number, bytes: number) => {
      layer.change('update', 1, { attributes: sampleFeature(definition, serverGen).attributes, geometry: null }, serverGen);
      layer.changeAttachment('update', attachmentOf(1, { bytes }), serverGen);
      layer.endGeneration();
    };
    edit(10, 60);
    t.equal(layer.log.forgottenUpTo, undefined, '60 bytes of 100: all kept');
    edit(20, 60);
    t.equal(layer.log.forgottenUpTo, 10, 'past 100 bytes: the oldest generation forgotten');
    t.same(
      layer.attachments.between(0, 20).map(({ serverGen }) => serverGen),
      [20],
    );
    t.same(
      layer.log.between(0, 20).map(({ serverGen }) => serverGen),
      [20],
      "the features' changes of that generation too: a range from before it is refused for both",
    );
    edit(30, 500);
    t.equal(layer.log.forgottenUpTo, 20);
    t.same(
      layer.attachments.between(0, 30).map(({ serverGen }) => serverGen),
      [30],
      'a generation larger than the bound is kept whole',
    );
    t.equal(layer.attachments.loggedBytes, 500);
  },
);

t.test("each applyEdits generation bounds the layer's logs: its features' and its attachments' forget the same generations", async (t) => {
  const definition = parcelsLayers().find((layer) => layer.hasAttachments === true)!;
  const layer = new FeatureLayer(definition, new ChangeLog(2));
  const batchOf = () =>
    new EditBatch((id) => (id === layer.id ? layer : undefined), { useGlobalIds: false, rollbackOnFailure: true, user: 'u' });
  for (const serverGen of [10, 20, 30]) {
    layer.changeAttachment('add', attachmentOf(serverGen), serverGen);
    const batch = batchOf();
    batch.plan({ id: layer.id, adds: [sampleFeature(definition, serverGen), sampleFeature(definition, serverGen + 1)] });
    batch.commit(serverGen, serverGen);
  }
  t.equal(layer.log.forgottenUpTo, 20, 'two features a generation, two kept: generations 10 and 20 forgotten');
  t.same(
    layer.log.between(0, 30).map(({ serverGen }) => serverGen),
    [30, 30],
  );
  t.same(
    layer.attachments.between(0, 30).map(({ serverGen }) => serverGen),
    [30],
    'the attachments of the forgotten generations are forgotten with them',
  );
});
