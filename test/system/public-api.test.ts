import { readdirSync, readFileSync } from 'node:fs';
import t from 'tap';
import * as geohook from 'geohook';
import * as internal from 'geohook/internal';
import { repoPath } from '../helpers/paths.js';

/** Every page a user reads: the README and docs/. */
const docs = [repoPath('README.md'), ...readdirSync(repoPath('docs')).map((page) => repoPath('docs', page))]
  .map((path) => readFileSync(path, 'utf8'))
  .join('\n');

/** The names an entry exports, types included, as its source declares them. */
function exportedNames(entry: string): string[] {
  const source = readFileSync(repoPath('src', entry), 'utf8');
  return [...source.matchAll(/export (?:type )?\{([^}]*)\}/g)].flatMap(([, list]) =>
    list!
      .split(',')
      .map((name) => name.replace(/^\s*type\s+/, '').trim())
      .filter((name) => name !== ''),
  );
}

t.test('every value `geohook` exports is one the docs document, and none is internal', async (t) => {
  const values = Object.keys(geohook);
  t.ok(values.length >= 20 && values.length <= 30, `${values.length} values`);
  for (const name of values) t.match(docs, new RegExp(`\\b${name}\\b`), `${name} is documented`);
  for (const name of Object.keys(internal)) t.notOk(name in geohook, `${name} is internal only`);
});

t.test('no type or value of either entry is named after a global of the DOM or Node', async (t) => {
  const globals = ['Node', 'Element', 'Event', 'Request', 'Response', 'Headers', 'URL', 'Blob', 'File', 'Buffer', 'Worker', 'Storage'];
  const names = [...exportedNames('index.ts'), ...exportedNames('internal.ts')];
  t.ok(names.includes('PlacementNode'), 'the entries are read');
  t.same(
    names.filter((name) => globals.includes(name)),
    [],
  );
});
