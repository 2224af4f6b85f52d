import { applyEdits } from '@esri/arcgis-rest-feature-service';
import { ApiKeyManager } from '@esri/arcgis-rest-request';
import pg from 'pg';
import t from 'tap';
import { databaseUnavailable } from '../../src/mirror/database-unavailable.js';
import { PARCELS } from '../helpers/edits.js';
import { startEmulator } from '../helpers/emulator.js';
import { registrationEnv, startGeohook } from '../helpers/geohook.js';
import { startPostgres } from '../helpers/postgres.js';
import { uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { square } from '../helpers/square.js';
import { waitFor } from '../helpers/wait.js';

// Each test starts geohook, the emulator and PostgreSQL processes: past tap's 60 s beside the other test files.
t.setTimeout(180_000);

const redis = await startRedis(t);
const postgres = await startPostgres(t);
const port = postgres.port;
const password = decodeURIComponent(new URL(postgres.url).password);

/** What `pg` throws when it connects to `url`. */
async function connectError(url: string): Promise<unknown> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
  } catch (err) {
    return err;
  }
  await client.end();
  throw new Error(`${url} connected`);
}

t.test('a refused password and a missing database are each one line naming where, the variable and the fix', async (t) => {
  const wrongPassword = new URL(postgres.url);
  wrongPassword.password = 'not-the-password';
  const refused = databaseUnavailable(await connectError(wrongPassword.href), wrongPassword.href);
  t.equal(
    refused,
    `PostgreSQL at 127.0.0.1:${port} (MIRROR_DATABASE_URL) refused the sign-in of user "geohook" (password authentication failed for user "geohook"): check the user and password in MIRROR_DATABASE_URL`,
  );
  const missing = new URL(postgres.url);
  missing.pathname = '/gis';
  const noDatabase = databaseUnavailable(await connectError(missing.href), missing.href);
  t.equal(
    noDatabase,
    `PostgreSQL at 127.0.0.1:${port} (MIRROR_DATABASE_URL) has no database "gis": create it: createdb -h 127.0.0.1 -p ${port} -O geohook gis (then CREATE EXTENSION postgis in it), or name another in MIRROR_DATABASE_URL`,
  );
  t.notMatch(`${refused} ${noDatabase}`, password, 'never the password');
});

t.test('PostgreSQL unreachable is said once, with where, MIRROR_DATABASE_URL and the fix; its return in one line (issue 53)', async (t) => {
  await postgres.server.stop('fast');
  const emulator = await startEmulator(t);
  const url = `${emulator.url}/arcgis/rest/services/Hosted/Parcels/FeatureServer/0`;
  const authentication = ApiKeyManager.fromKey(await emulator.token());
  await applyEdits({ url, authentication, adds: [{ attributes: { parcel_id: 'P-1', status: 'Open' }, geometry: square(0) as never }] });
  const schema = 'mirror_unreachable';
  const geohook = await startGeohook(t, redis, {
    ...registrationEnv(emulator, [PARCELS], uniquePrefix()),
    MIRROR: PARCELS,
    MIRROR_DATABASE_URL: postgres.url,
    MIRROR_SCHEMA: schema,
  });
  const mirrorLines = (): Record<string, unknown>[] =>
    geohook
      .log()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.component === 'mirror');
  /** What a person sees (info and above); each try, with its error, is at debug. */
  const said = () => mirrorLines().filter((line) => (line.level as number) >= 30);
  const tries = () => mirrorLines().filter((line) => line.msg === 'mirror check failed');

  // Its own tries at 0, 1 and 3 s (backoff from 1 s), unless it says more than it should before.
  await waitFor('three tries, or more than two lines', () => tries().length >= 3 || said().length > 2, { timeoutMs: 15_000 });
  const lines = said();
  t.ok(lines.length <= 2, `at most two lines in three tries (got ${lines.length})`);
  t.match(lines[0], {
    level: 40,
    failed: `cannot reach PostgreSQL at 127.0.0.1:${port} (MIRROR_DATABASE_URL): the connection was refused: is PostgreSQL running at 127.0.0.1:${port}?`,
  });
  t.notMatch(JSON.stringify(lines), /"stack"|\\n\s+at /, 'no stack');
  t.notMatch(geohook.log(), password, 'never the password');

  const returns = () => said().filter((line) => line.msg === 'PostgreSQL reachable again').length;
  /** The parcels' statuses in the mirror, once it has `wanted`. */
  const mirrored = async (wanted: string): Promise<string[]> => {
    const client = new pg.Client({ connectionString: postgres.url });
    await client.connect();
    try {
      return await waitFor(`the parcel ${wanted} in the mirror`, async () => {
        const { rows } = await client.query<{ row: string }>(`SELECT parcel_id || ' ' || status AS row FROM ${schema}.parcels_parcels`);
        return rows.some((row) => row.row === wanted) && rows.map((row) => row.row);
      });
    } finally {
      await client.end();
    }
  };

  await postgres.server.start();
  await waitFor('the return said', () => returns() === 1, { timeoutMs: 20_000 });
  t.same(await mirrored('P-1 Open'), ['P-1 Open']);
  t.equal(returns(), 1, 'its return in one line');

  // Stopped while the mirror runs: said again, a line per cause (shutting down, then refused), and the edit made
  // meanwhile mirrored once it is back.
  const [saidBefore, triedBefore] = [said().length, tries().length];
  await postgres.server.stop('fast');
  await applyEdits({ url, authentication, updates: [{ attributes: { objectid: 1, status: 'Closed' } }] });
  await waitFor('three more tries, or more than two lines', () => tries().length >= triedBefore + 3 || said().length > saidBefore + 2, {
    timeoutMs: 15_000,
  });
  const stopped = said().slice(saidBefore);
  t.ok(stopped.length <= 2, `a line per cause while it is away (got ${stopped.length})`);
  t.match(stopped.at(-1), {
    level: 40,
    failed: `cannot reach PostgreSQL at 127.0.0.1:${port} (MIRROR_DATABASE_URL): the connection was refused`,
  });
  await postgres.server.start();
  t.same(await mirrored('P-1 Closed'), ['P-1 Closed']);
  t.equal(returns(), 2, 'its return in one line');
  t.notMatch(JSON.stringify(said()), /"stack"/, 'no stack');
});
