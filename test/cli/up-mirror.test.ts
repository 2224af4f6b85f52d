import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import t from 'tap';

const UP_MIRROR = fileURLToPath(new URL('../../src/cli/up-mirror.js', import.meta.url));

t.test('issue 51: the psql command of a configured MIRROR_DATABASE_URL carries no password', async (t) => {
  // In a process of its own: the notice goes to its real stderr.
  const mirror = {
    services: ['Hosted/Parcels.FeatureServer'],
    databaseUrl: 'postgres://geohook:s3cret@db.example.com:5432/gis',
    schema: 'gis',
  };
  const script = `const { printMirrorNotice } = await import(${JSON.stringify(UP_MIRROR)}); printMirrorNotice(${JSON.stringify(mirror)}, undefined);`;
  const { stderr } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  t.match(stderr, /^look: +psql 'postgres:\/\/geohook@db\.example\.com:5432\/gis' -c 'SELECT \* FROM gis\.mirror_state'$/m);
  t.notOk(stderr.includes('s3cret'), 'no password');
});
