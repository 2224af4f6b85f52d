import { existsSync, readdirSync } from 'node:fs';
import t from 'tap';
import { ChangeFileIndexer } from '../../src/arcgis-request/change-file-index.js';
import { changeFileOf, spoolChangeFile } from '../../src/arcgis-request/change-file.js';
import { parseExactJson } from '../../src/arcgis-request/parse-exact-json.js';
import { GeohookError } from '../../src/errors.js';

const tricky = {
  attributes: { objectid: 2, name: 'a "quoted" } ] name \\', note: 'back\\\\slash\\"', unicode: 'Zürich ✓ 😀', big: 1 },
  geometry: {
    rings: [
      [
        [-122.41941550000001, 37.77492950000001],
        [1e-7, -2.5e10],
        [0, 0],
      ],
    ],
  },
};
const file = {
  layerServerGens: [
    { id: 0, serverGen: 12 },
    { id: 1, serverGen: 12 },
  ],
  edits: [
    {
      id: 0,
      features: {
        adds: [{ attributes: { objectid: 1, big: 9007199254740992 } }, tricky, { attributes: { objectid: 3, empty: {}, list: [] } }],
        updates: [],
        deleteIds: [7, 8, 9],
      },
    },
    { features: { adds: [{ attributes: { objectid: 10 } }], deleteIds: ['{A}', '{B"}'] }, id: 1, extra: { nested: [1, { id: 5 }] } },
    { id: 2, objectIds: { adds: [1, 2], updates: [], deletes: [3] } },
  ],
  trailing: 'x',
};
// The big integer is written with every digit: JSON.stringify of a number would round it.
const text = JSON.stringify(file, null, 1).replace('"big": 9007199254740992', '"big": 9007199254740993');

const listsOf = (json: string, chunkBytes: number) => {
  const bytes = Buffer.from(json);
  const indexer = new ChangeFileIndexer();
  for (let start = 0; start < bytes.length; start += chunkBytes) indexer.write(bytes.subarray(start, start + chunkBytes));
  const index = indexer.end();
  return {
    index,
    lists: index.lists.map((list) => ({
      layerId: list.layerId,
      kind: list.kind,
      elements: list.starts.map((start, element) => parseExactJson(bytes.subarray(start, list.ends[element]).toString('utf8'))),
      longIntegers: list.longIntegers
        .map((offset, at) => (at % 2 === 0 ? bytes.subarray(offset, list.longIntegers[at + 1]).toString() : ''))
        .filter(Boolean),
    })),
  };
};

t.test('the indexer finds every element of every list, whatever the chunks the bytes come in', async (t) => {
  t.match(text, /9007199254740993/);
  const expected = [
    {
      layerId: 0,
      kind: 'adds',
      elements: [{ attributes: { objectid: 1, big: '9007199254740993' } }, tricky, file.edits[0]!.features!.adds[2]],
    },
    { layerId: 0, kind: 'updates', elements: [] },
    { layerId: 0, kind: 'deleteIds', elements: [7, 8, 9] },
    { layerId: 1, kind: 'adds', elements: [{ attributes: { objectid: 10 } }] },
    { layerId: 1, kind: 'deleteIds', elements: ['{A}', '{B"}'] },
    { layerId: 2, kind: 'objectIds.adds', elements: [1, 2] },
    { layerId: 2, kind: 'objectIds.updates', elements: [] },
    { layerId: 2, kind: 'objectIds.deletes', elements: [3] },
  ];
  for (const chunkBytes of [1, 2, 3, 5, 7, 64, 1 << 20]) {
    const { index, lists } = listsOf(text, chunkBytes);
    t.strictSame(
      lists.map(({ longIntegers: _longIntegers, ...list }) => list),
      expected,
      `chunks of ${chunkBytes} bytes`,
    );
    t.strictSame(lists[0]!.longIntegers, ['9007199254740993'], `the long integers outside strings are found (${chunkBytes})`);
    t.equal(index.hasEdits, true);
    t.strictSame(
      Object.fromEntries([...index.root].map(([key, value]) => [key, JSON.parse(value) as unknown])),
      { layerServerGens: file.layerServerGens, trailing: 'x' },
      `the top-level values are kept as text (${chunkBytes})`,
    );
  }
});

t.test('compact JSON, escapes at chunk ends and a file without edits', async (t) => {
  const compact = JSON.stringify({ edits: [{ id: 4, features: { adds: [{ attributes: { s: '\\\\"\\' } }] } }] });
  for (const chunkBytes of [1, 2, 3, 4]) {
    t.strictSame(listsOf(compact, chunkBytes).lists[0]!.elements, [{ attributes: { s: '\\\\"\\' } }], `chunks of ${chunkBytes}`);
  }
  const { index } = listsOf('{"error":{"code":498,"message":"Invalid token."}}', 3);
  t.equal(index.hasEdits, false);
  t.strictSame(JSON.parse(index.root.get('error')!), { code: 498, message: 'Invalid token.' });
});

t.test('issue 55: attachment lists (returnAttachments=true) are indexed beside the features, in memory and spooled alike', async (t) => {
  const photo = {
    attachmentId: 1,
    globalId: '{C}',
    parentGlobalId: '{P}',
    name: 'a ] "photo".jpg',
    size: 3,
    url: 'http://x/0/1/attachments/1',
  };
  const body = {
    edits: [
      {
        id: 0,
        features: { adds: [{ attributes: { objectid: 1 } }], updates: [], deleteIds: [] },
        attachments: { adds: [photo], updates: [], deleteIds: ['{D}'] },
      },
    ],
  };
  const expected = [
    { layerId: 0, kind: 'adds', elements: [{ attributes: { objectid: 1 } }] },
    { layerId: 0, kind: 'updates', elements: [] },
    { layerId: 0, kind: 'deleteIds', elements: [] },
    { layerId: 0, kind: 'attachments.adds', elements: [photo] },
    { layerId: 0, kind: 'attachments.updates', elements: [] },
    { layerId: 0, kind: 'attachments.deleteIds', elements: ['{D}'] },
  ];
  for (const chunkBytes of [1, 7, 1 << 20]) {
    t.strictSame(
      listsOf(JSON.stringify(body), chunkBytes).lists.map(({ longIntegers: _longIntegers, ...list }) => list),
      expected,
      `chunks of ${chunkBytes} bytes`,
    );
  }
  const inMemory = changeFileOf(body);
  t.strictSame(
    inMemory.lists.map(({ kind, length }) => [kind, length]),
    expected.map(({ kind, elements }) => [kind, elements.length]),
  );
  t.strictSame(await inMemory.read(3, 0, 1), [photo]);
});

t.test('what is not a change file is refused', async (t) => {
  for (const [json, why] of [
    ['[1,2]', 'a top-level array'],
    ['{"edits":[{"id":0,"features":{"adds":[{}', 'a truncated file'],
    ['{"edits":[]} {}', 'a second value after the object'],
    ['{"edits":[] "x":1}', 'a missing comma'],
  ] as const) {
    t.throws(() => listsOf(json, 2), SyntaxError, why);
  }
});

t.test('a spooled file is read back a batch at a time, then deleted', async (t) => {
  const features = Array.from({ length: 1200 }, (_, index) => ({ attributes: { objectid: index + 1, name: `feature ${index}` } }));
  const body = JSON.stringify({
    layerServerGens: [{ id: 0, serverGen: 3 }],
    edits: [{ id: 0, features: { adds: features, deleteIds: [5] } }],
  });
  async function* chunks() {
    const bytes = Buffer.from(body);
    for (let start = 0; start < bytes.length; start += 1000) yield bytes.subarray(start, start + 1000);
  }
  const spooled = await spoolChangeFile(chunks(), { dir: t.testdir() });
  t.strictSame(spooled.lists, [
    { layerId: 0, kind: 'adds', length: 1200 },
    { layerId: 0, kind: 'deleteIds', length: 1 },
  ]);
  t.strictSame(spooled.root, { layerServerGens: [{ id: 0, serverGen: 3 }] });
  t.strictSame(await spooled.read(0, 0, 500), features.slice(0, 500));
  t.strictSame(await spooled.read(0, 1000, 1500), features.slice(1000), 'a batch past the end stops at it');
  t.strictSame(await spooled.read(1, 0, 500), [5]);
  t.strictSame(await spooled.read(0, 1200, 1300), []);
  const folders = readdirSync(t.testdirName);
  t.equal(folders.length, 1, 'a folder of its own');
  await spooled.close();
  t.notOk(existsSync(`${t.testdirName}/${folders[0]}`), 'closing deletes it');

  async function* broken() {
    yield Buffer.from('{"edits":[{"id":0,"features":{"adds":[{"a":1}');
  }
  await t.rejects(spoolChangeFile(broken(), { dir: t.testdirName }), GeohookError);
  t.equal(readdirSync(t.testdirName).length, 0, 'a refused file is deleted at once');
});

t.test('integers beyond 2^53 read from a spooled file are decimal strings with every digit', async (t) => {
  const body =
    '{"edits":[{"id":0,"features":{"adds":[' +
    '{"attributes":{"objectid":1,"big":9223372036854775807,"neg":-9007199254740993,"safe":9007199254740991}},' +
    '{"attributes":{"objectid":2,"text":"12345678901234567890","x":-122.41941550000001,"e":12345678901234567e3,"f":12345678901234567.5}}' +
    '],"deleteIds":[90071992547409930]}}]}';
  async function* chunks() {
    for (let start = 0; start < body.length; start += 7) yield Buffer.from(body.slice(start, start + 7));
  }
  const spooled = await spoolChangeFile(chunks(), { dir: t.testdir() });
  t.teardown(() => spooled.close());
  t.strictSame(await spooled.read(0, 0, 2), [
    { attributes: { objectid: 1, big: '9223372036854775807', neg: '-9007199254740993', safe: 9007199254740991 } },
    {
      attributes: {
        objectid: 2,
        text: '12345678901234567890',
        x: -122.41941550000001,
        e: Number('12345678901234567e3'),
        f: Number('12345678901234567.5'),
      },
    },
  ]);
  t.strictSame(await spooled.read(0, 1, 2), [(await spooled.read(0, 0, 2))[1]], 'a batch that starts after a long integer');
  t.strictSame(await spooled.read(1, 0, 1), ['90071992547409930'], 'a deleted id too');
});

t.test('an answer given at once is read from memory the same way', async (t) => {
  const memory = changeFileOf(JSON.parse(text) as Record<string, unknown>);
  t.equal(memory.hasEdits, true);
  t.strictSame(
    memory.lists.map(({ layerId, kind, length }) => `${layerId}:${kind}:${length}`),
    [
      '0:adds:3',
      '0:updates:0',
      '0:deleteIds:3',
      '1:adds:1',
      '1:deleteIds:2',
      '2:objectIds.adds:2',
      '2:objectIds.updates:0',
      '2:objectIds.deletes:1',
    ],
  );
  t.strictSame(await memory.read(2, 1, 3), [8, 9]);
  t.strictSame(memory.root, { layerServerGens: file.layerServerGens, trailing: 'x' });
});
