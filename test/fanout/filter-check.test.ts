import t from 'tap';
import { loadConfig } from '../../src/config/load-config.js';
import type { RouteFilterConfig } from '../../src/config/route-filter.js';
import { checkConfiguredFilters } from '../../src/fanout/configured-filters.js';
import { runCli } from '../helpers/cli.js';
import { PARCELS } from '../helpers/edits.js';
import { startEmulator } from '../helpers/emulator.js';
import { startGeohook } from '../helpers/geohook.js';
import { configFile, uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';

const redis = await startRedis(t);
const emulator = await startEmulator(t);
const SINK = 'https://example.com/hooks';

/** The environment of a receiver following Parcels in the emulator, with `track` tracked. */
const envOf = (file: string, track = 'status,owner'): Record<string, string> => ({
  ADMIN_URL: emulator.baseUrl,
  ADMIN_USERNAME: 'admin',
  ADMIN_PASSWORD: 'admin.pass',
  CHANGES: PARCELS,
  CHANGES_TRACK: track,
  GEOHOOK_CONFIG: file,
});

/** The messages `checkConfiguredFilters` gives one route with `filter`. */
async function issuesOf(filter: Partial<RouteFilterConfig>, track?: string): Promise<string[]> {
  const route = { name: 'r', url: SINK, format: 'teams', types: ['change.*'], ...filter };
  const config = loadConfig(envOf(configFile(t, { relays: [route] }), track));
  const { issues, unread } = await checkConfiguredFilters(config);
  if (unread.length > 0) throw unread[0]!.error;
  return issues.map((issue) => `${issue.part}: ${issue.message}`);
}

t.test('filters that hold on the layers of Parcels pass', async (t) => {
  t.same(await issuesOf({ where: "status = 'Closed'", changed: ['status'] }), []);
  t.same(await issuesOf({ where: "STATUS IN ('Open', 'Pending') AND area_sqm > 10", emit: 'both' }, '*'), [], 'names in any case');
  t.same(await issuesOf({ where: "before.status = 'Open' AND after.status = 'Closed'" }), []);
  t.same(await issuesOf({ when: { field: 'Status', from: 'Open', to: 'Closed' } }), []);
  t.same(await issuesOf({ where: "inspector = 'ann'" }), [], 'a field of the Inspections table only: the table is filtered, Parcels not');
});

t.test('the mistakes of the first trial are refused, each with its fix', async (t) => {
  t.same(await issuesOf({ where: 'status = Closed' }), [
    "where: `Closed` is not a field of Parcels (Hosted/Parcels.FeatureServer layer 0); did you mean 'Closed'? (a value is quoted in single quotes)",
  ]);
  t.same(await issuesOf({ changed: ['Statu'] }), [
    'changed: `Statu` is not a field of Parcels (Hosted/Parcels.FeatureServer layer 0); did you mean status?',
  ]);
  t.same(await issuesOf({ changed: ['Status'] }, 'Status'), [
    "changed: changed \"Status\" reads the previous value of status, tracked as 'Status': CHANGES_TRACK names are exact: write 'status'",
  ]);
  t.same(await issuesOf({ changed: ['area_sqm'] }), [
    'changed: changed "area_sqm" reads the previous value of area_sqm, which geohook does not keep: add area_sqm to CHANGES_TRACK (or the service\'s track)',
  ]);
});

t.test('values must fit their field: its type and its coded values; two fields compared must be of one type', async (t) => {
  t.same(await issuesOf({ where: "status = 'Closd'" }), [
    "where: 'Closd' is not a code of status in Parcels (Hosted/Parcels.FeatureServer layer 0): 'Open', 'Pending', 'Closed'",
  ]);
  t.match(await issuesOf({ where: "area_sqm > 'big'" }), [/^where: 'big' is not a number \(in Parcels/]);
  t.match(await issuesOf({ where: 'area_sqm = owner' }), [
    /^where: cannot compare field 'area_sqm' \(esriFieldTypeDouble\) with field 'owner'/,
  ]);
  t.same(await issuesOf({ when: { field: 'status', to: 'closed' } }), [
    "when: to 'closed' is not a code of status in Parcels (Hosted/Parcels.FeatureServer layer 0): 'Open', 'Pending', 'Closed'",
  ]);
  t.match(await issuesOf({ when: { field: 'area_sqm', to: 'large' } }, '*'), [/^when: to 'large' is not a number/]);
});

t.test('a filter of a service not followed, of a layer the service lacks, or of an untracked before. cannot match', async (t) => {
  t.same(await issuesOf({ services: ['Hosted/Roads.FeatureServer'], where: "status = 'Open'" }), [
    'services: its where, changed and when read change events, and Hosted/Roads.FeatureServer is not followed for them: add it to CHANGES',
  ]);
  t.same(await issuesOf({ services: [PARCELS], layers: [7], where: "status = 'Open'" }), [
    'layers: no followed service of this filter has a layer 7',
  ]);
  t.same(await issuesOf({ where: 'before.area_sqm < 10' }), [
    "where: before.area_sqm reads the previous value of area_sqm, which geohook does not keep: add area_sqm to CHANGES_TRACK (or the service's track)",
  ]);
  t.same(await issuesOf({ where: 'area_sqm < 10', emit: 'left' }), [
    'where: emit "left" reads the previous value of area_sqm, which geohook does not keep: add area_sqm to CHANGES_TRACK (or the service\'s track)',
  ]);
});

t.test('start-up stops on a filter that cannot match, with its code', async (t) => {
  const file = configFile(t, { relays: [{ name: 'closed', url: SINK, format: 'teams', types: ['change.*'], where: 'status = Closed' }] });
  await t.rejects(startGeohook(t, redis, { ...envOf(file), GEOHOOK_PREFIX: uniquePrefix() }), {
    code: 'GEOHOOK_ERR_FILTER_CANNOT_MATCH',
    message: /^route "closed" where "status = Closed": `Closed` is not a field of Parcels/,
  });
});

t.test('geohook config check: exit 1 with each mistake, --json; exit 0 when all hold', async (t) => {
  const bad = configFile(t, {
    relays: [{ name: 'closed', url: SINK, format: 'teams', types: ['change.*'], where: 'status = Closed' }],
    subscriptions: [{ name: 'status', types: ['change.updated'], changed: ['Statu'] }],
  });
  const text = await runCli(['config', 'check'], { env: envOf(bad) });
  t.equal(text.code, 1);
  t.match(text.stdout, /✗ GEOHOOK_ERR_FILTER_CANNOT_MATCH: route "closed" where "status = Closed": `Closed` is not a field/);
  t.match(
    text.stdout,
    /✗ GEOHOOK_ERR_FILTER_CANNOT_MATCH: subscription "status" changed \["Statu"\]: `Statu` is not a field.*did you mean status\?/,
  );
  const json = await runCli(['config', 'check', '--json'], { env: envOf(bad) });
  t.equal(json.code, 1);
  const answer = JSON.parse(json.stdout) as { ok: boolean; errors: { code: string; owner: string; part: string; clause: string }[] };
  t.equal(answer.ok, false);
  t.match(answer.errors, [
    { code: 'GEOHOOK_ERR_FILTER_CANNOT_MATCH', owner: 'route "closed"', part: 'where', clause: 'status = Closed' },
    { code: 'GEOHOOK_ERR_FILTER_CANNOT_MATCH', owner: 'subscription "status"', part: 'changed' },
  ]);
  const good = configFile(t, { relays: [{ name: 'closed', url: SINK, format: 'teams', types: ['change.*'], where: "status = 'Closed'" }] });
  const fine = await runCli(['config', 'check'], { env: envOf(good) });
  t.equal(fine.code, 0, fine.stdout + fine.stderr);
  t.match(fine.stdout, /✓ the configuration holds: 1 relay routes and 0 subscriptions, checked against Hosted\/Parcels.FeatureServer/);
  const broken = await runCli(['config', 'check', '--json'], {
    env: { ...envOf(good), CHANGES_TRACK: '', GEOHOOK_CONFIG: '/nonexistent.json' },
  });
  t.equal(broken.code, 1);
  t.match(
    JSON.parse(broken.stdout),
    { ok: false, errors: [{ code: 'GEOHOOK_ERR_CONFIG' }] },
    'a config that does not load is an error too',
  );
});

t.test("issue 54: a changes service's transition filter is checked against the layers as a route's, and by config check", async (t) => {
  const issuesOfService = async (settings: Record<string, unknown>): Promise<string[]> => {
    const config = loadConfig(envOf(configFile(t, { changes: { [PARCELS]: settings } })));
    const { issues, unread } = await checkConfiguredFilters(config);
    if (unread.length > 0) throw unread[0]!.error;
    return issues.map((issue) => `${issue.owner} ${issue.part}: ${issue.message}`);
  };
  t.same(
    await issuesOfService({ where: "before.status = 'Open' AND after.status = 'Closed'" }),
    [],
    'before. and after. of a tracked field',
  );
  t.same(await issuesOfService({ where: "status = 'Open'", emit: 'both', layers: [0] }), []);
  t.same(await issuesOfService({ when: { field: 'Statuz', to: 'Closed' } }), [
    `changes service "${PARCELS}" when: \`Statuz\` is not a field of Parcels (Hosted/Parcels.FeatureServer layer 0); did you mean status?`,
  ]);
  t.same(await issuesOfService({ where: { 0: 'before.area_sqm > 10' } }), [
    `changes service "${PARCELS}" where: before.area_sqm reads the previous value of area_sqm, which geohook does not keep: add area_sqm to CHANGES_TRACK (or the service's track)`,
  ]);
  const file = configFile(t, { changes: { [PARCELS]: { where: 'status = Closed', emit: 'left' } } });
  const checked = await runCli(['config', 'check'], { env: envOf(file) });
  t.equal(checked.code, 1, 'config check refuses it');
  t.match(
    checked.stdout + checked.stderr,
    /changes service "Hosted\/Parcels.FeatureServer" where "status = Closed": `Closed` is not a field of Parcels/,
  );
});

t.test('geohook subscriptions create refuses a filter that cannot match, and makes one that can', async (t) => {
  const file = configFile(t, {});
  const env = { ...envOf(file), REDIS_URL: redis.url, GEOHOOK_PREFIX: uniquePrefix() };
  const refused = await runCli(['subscriptions', 'create', 'closed', '--types', 'change.*', '--changed', 'Statu'], { env });
  t.equal(refused.code, 1);
  t.match(refused.stderr, /subscription "closed" changed \["Statu"\]: `Statu` is not a field of Parcels .*did you mean status\?/);
  const made = await runCli(['subscriptions', 'create', 'closed', '--types', 'change.*', '--changed', 'Status'], { env });
  t.equal(made.code, 0, made.stderr);
  t.match(JSON.parse(made.stdout), { subscription: 'closed', created: true });
});
