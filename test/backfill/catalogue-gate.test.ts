import pino from 'pino';
import t from 'tap';
import { createCatalogueGate } from '../../src/backfill/catalogue-gate.js';
import { createServiceCatalogue } from '../../src/backfill/service-catalogue.js';

const ADMIN_URL = 'https://gis.example.com/arcgis/admin';
const rest = (path: string) => new URL(`https://gis.example.com/arcgis/rest/services/${path}`);

/** A catalogue of `names` on a clock the test moves, counting its reads; `fail` makes the next reads fail. */
function catalogueOf(names: string[]) {
  const state = { now: 0, reads: 0, fail: false };
  const catalogue = createServiceCatalogue({
    list: async () => {
      state.reads += 1;
      if (state.fail) throw new Error('admin API down');
      return names;
    },
    logger: pino({ level: 'silent' }),
    now: () => state.now,
  });
  return { catalogue, state };
}

t.test('registered and polled services are read without a catalogue read; listed ones after one shared read', async (t) => {
  const { catalogue, state } = catalogueOf(['Hosted/Roads.FeatureServer', 'Wells.FeatureServer']);
  const gate = createCatalogueGate({ adminUrl: ADMIN_URL, known: ['Hosted/Parcels.FeatureServer'], catalogue });
  t.equal(await gate.verdict(rest('Hosted/Parcels/FeatureServer')), 'read');
  t.equal(state.reads, 0, 'a registered service needs no catalogue');
  const verdicts = await Promise.all([
    gate.verdict(rest('hosted/ROADS/FeatureServer')),
    gate.verdict(rest('Wells/FeatureServer')),
    gate.verdict(rest('Hosted/Invented/FeatureServer')),
    gate.verdict(rest('Hosted%2FRoads/FeatureServer')),
    gate.verdict(new URL('https://gis.example.com/arcgis/elsewhere/Hosted/Roads/FeatureServer')),
  ]);
  t.same(verdicts, ['read', 'read', 'unlisted', 'unlisted', 'unlisted']);
  t.equal(state.reads, 1, 'one read for all of them');
  t.equal(
    await gate.verdict(new URL('https://gis2.example.com/arcgis/rest/services/Hosted/Other/FeatureServer')),
    'read',
    'another server: not for this catalogue to judge',
  );
});

t.test('unknown names read the catalogue again at most once a minute; it is refreshed every 5 minutes', async (t) => {
  const { catalogue, state } = catalogueOf(['Hosted/Roads.FeatureServer']);
  for (let i = 0; i < 100; i += 1) t.equal(await catalogue.lists(`Hosted/Inv${i}.FeatureServer`), false);
  t.equal(state.reads, 1, 'a flood of unknown names: one read');
  state.now = 60_000;
  t.equal(await catalogue.lists('Hosted/Inv.FeatureServer'), false);
  t.equal(state.reads, 2, 'a minute later, a miss reads again');
  state.now = 299_999;
  t.equal(await catalogue.lists('Hosted/Roads.FeatureServer'), true);
  t.equal(state.reads, 2, 'a listed name reads nothing');
  state.now = 360_000;
  await catalogue.lists('Hosted/Roads.FeatureServer');
  t.equal(state.reads, 3, 'past 5 minutes, refreshed');
});

t.test('a catalogue never read answers undefined; a failed refresh keeps the last copy and waits a minute', async (t) => {
  const { catalogue, state } = catalogueOf(['Hosted/Roads.FeatureServer']);
  state.fail = true;
  t.equal(await catalogue.lists('Hosted/Roads.FeatureServer'), undefined);
  t.equal(await catalogue.lists('Hosted/Roads.FeatureServer'), undefined);
  t.equal(state.reads, 1, 'the failure is not retried at once');
  state.fail = false;
  state.now = 60_000;
  t.equal(await catalogue.lists('Hosted/Roads.FeatureServer'), true);
  state.fail = true;
  state.now = 400_000;
  t.equal(await catalogue.lists('Hosted/Roads.FeatureServer'), true, 'the last copy kept');
});
