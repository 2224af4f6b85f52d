import t from 'tap';
import { compileWildcards, matchesWildcards } from '../../src/arcgis/wildcards.js';

const GLOB = { many: '*', one: '?' };

/** `text` as characters whose reads are counted. */
function counted(text: string): { chars: ArrayLike<string>; reads: () => number } {
  let reads = 0;
  const chars = new Proxy([...text], {
    get(target, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) reads += 1;
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
  return { chars, reads: () => reads };
}

t.test('wildcards: many matches any run (none included), one exactly one character, the rest itself', async (t) => {
  const matches = compileWildcards('Hosted/*Parcels?.*Server', GLOB);
  t.ok(matches('Hosted/ParcelsX.FeatureServer'));
  t.ok(matches('Hosted/Old/ParcelsX.MapServer'));
  t.notOk(matches('Hosted/Parcels.FeatureServer'), '? needs one character');
  t.notOk(matches('Tools/ParcelsX.GPServer'));
  t.ok(compileWildcards('a.c', GLOB)('a.c'));
  t.notOk(compileWildcards('a.c', GLOB)('abc'), 'a dot is a dot');
  t.ok(compileWildcards('**', GLOB)(''));
});

t.test('issue 51 (N9): a pattern with two * reads a pathological 42,000-character name in linear steps', async (t) => {
  const pattern = [...'Hosted/*Parcels*.FeatureServer'];
  for (const repeats of [6000, 12000]) {
    const name = counted(`Hosted/${'Parcels'.repeat(repeats)}.GPServer`);
    t.notOk(matchesWildcards(name.chars, pattern, GLOB));
    t.ok(name.reads() <= 4 * name.chars.length, `${name.reads()} reads for ${name.chars.length} characters`);
  }
});
