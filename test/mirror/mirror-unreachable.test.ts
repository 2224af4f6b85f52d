import { applyEdits } from '@esri/arcgis-rest-feature-service';
import { ApiKeyManager } from '@esri/arcgis-rest-request';
import pg from 'pg';
import t from 'tap';
import { databaseUnavailable } from '../../src/mirror/database-unavailable.js';
import { PARCELS } from '../helpers/edits.js';
import { startEmulator } from '../helpers/emulator.js';
import { registrationEnv, startGeohook } from '../helpers/geohook.js';
import { square } from '../helpers/mirror.js';
import { startPostgres } from '../helpers/postgres.js';
import { uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

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

  await postgres.server.start();
  await waitFor('the return said', () => said().some((line) => line.msg === 'PostgreSQL reachable again'), { timeoutMs: 20_000 });
  const client = await postgres.connect(t);
  const rows = await waitFor('the parcel mirrored', async () => {
    const { rows } = await client.query<{ parcel_id: string }>(`SELECT parcel_id FROM ${schema}.parcels_parcels`);
    return rows.length > 0 && rows.map((row) => row.parcel_id);
  });
  t.same(rows, ['P-1']);
  t.equal(said().filter((line) => line.msg === 'PostgreSQL reachable again').length, 1, 'its return in one line');
});
