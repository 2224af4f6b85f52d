import t from 'tap';
import { startPostgres } from '../helpers/postgres.js';

const postgres = await startPostgres(t);

t.test('the throwaway cluster has PostGIS and listens on 127.0.0.1 only', async (t) => {
  const client = await postgres.connect(t);
  const { rows } = await client.query<{ postgis: string; listen: string; fsync: string }>(
    "SELECT postgis_lib_version() AS postgis, current_setting('listen_addresses') AS listen, current_setting('fsync') AS fsync",
  );
  t.match(rows[0]?.postgis, /^3\./);
  t.equal(rows[0]?.listen, '127.0.0.1');
  t.equal(rows[0]?.fsync, 'off');
  t.match(postgres.url, new RegExp(`^postgres://postgres:[^@]+@127\\.0\\.0\\.1:${postgres.port}/geohook$`));
});

t.test('a client without the password is refused', async (t) => {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: `postgres://postgres:wrong@127.0.0.1:${postgres.port}/geohook` });
  await t.rejects(client.connect(), { code: '28P01' });
});
