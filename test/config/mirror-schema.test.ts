import t from 'tap';
import { servicesWithoutEdits } from '../../src/config/followed-services.js';
import { loadConfig } from '../../src/config/load-config.js';
import { mirrorServerOf } from '../../src/config/mirror-schema.js';

const ADMIN = { ADMIN_URL: 'https://gis.example.com/server/admin' };
const DATABASE = 'postgres://geohook:secret@127.0.0.1:5432/gis';

t.test('no mirror unless MIRROR or MIRROR_DATABASE_URL is set, nor with a database and no service to mirror', async (t) => {
  t.equal(loadConfig({ ...ADMIN, CHANGES: 'Hosted/Parcels.FeatureServer' }).mirror, undefined);
  t.equal(loadConfig({ ...ADMIN, MIRROR_DATABASE_URL: DATABASE }).mirror, undefined);
});

t.test('MIRROR_DATABASE_URL alone mirrors the CHANGES services into the geohook schema', async (t) => {
  t.same(loadConfig({ ...ADMIN, CHANGES: 'Hosted/Parcels.FeatureServer,Roads.FeatureServer', MIRROR_DATABASE_URL: DATABASE }).mirror, {
    services: ['Hosted/Parcels.FeatureServer', 'Roads.FeatureServer'],
    databaseUrl: DATABASE,
    schema: 'geohook',
    attachmentBytes: false,
  });
});

t.test('MIRROR names the services, whether in CHANGES or not; MIRROR_SCHEMA the schema', async (t) => {
  const config = loadConfig({ ...ADMIN, MIRROR: 'Hosted/Roads.FeatureServer', MIRROR_DATABASE_URL: DATABASE, MIRROR_SCHEMA: 'gis_mirror' });
  t.same(config.mirror, { services: ['Hosted/Roads.FeatureServer'], databaseUrl: DATABASE, schema: 'gis_mirror', attachmentBytes: false });
  t.same(config.admin?.changes.services, []);
});

t.test('MIRROR without a database leaves it to geohook up (a local PostgreSQL): no URL in the configuration', async (t) => {
  t.same(loadConfig({ MIRROR: 'Hosted/Parcels.FeatureServer' }).mirror, {
    services: ['Hosted/Parcels.FeatureServer'],
    databaseUrl: undefined,
    schema: 'geohook',
    attachmentBytes: false,
  });
});

t.test('a database without ADMIN_URL is left to geohook up (its emulator), and refused to a server naming ADMIN_URL', async (t) => {
  const mirror = loadConfig({ MIRROR_DATABASE_URL: DATABASE }).mirror;
  t.same(
    mirror,
    { services: [], databaseUrl: DATABASE, schema: 'geohook', attachmentBytes: false },
    'geohook up fills in its emulator’s services',
  );
  t.throws(() => mirrorServerOf(mirror!, undefined), { code: 'GEOHOOK_ERR_CONFIG', message: /^ADMIN_URL: required with MIRROR/ });
  const local = loadConfig({ ...ADMIN, MIRROR: 'Hosted/Parcels.FeatureServer' }).mirror!;
  t.throws(() => mirrorServerOf(local, ADMIN.ADMIN_URL), { code: 'GEOHOOK_ERR_CONFIG', message: /^MIRROR_DATABASE_URL: required/ });
});

t.test('MIRROR_ATTACHMENT_BYTES keeps the bytes in the attachments tables; it is true or false', async (t) => {
  t.equal(
    loadConfig({ ...ADMIN, MIRROR: 'Hosted/Roads.FeatureServer', MIRROR_DATABASE_URL: DATABASE, MIRROR_ATTACHMENT_BYTES: 'true' }).mirror
      ?.attachmentBytes,
    true,
  );
  t.throws(() => loadConfig({ ...ADMIN, MIRROR: 'Hosted/Roads.FeatureServer', MIRROR_ATTACHMENT_BYTES: 'yes' }), {
    code: 'GEOHOOK_ERR_CONFIG',
    message: /MIRROR_ATTACHMENT_BYTES.*true or false/,
  });
});

t.test('bad values are refused with the variable named', async (t) => {
  const refused = (env: Record<string, string>, variable: string) =>
    t.throws(() => loadConfig(env), { code: 'GEOHOOK_ERR_CONFIG', message: new RegExp(`^${variable}(\\.\\d+)?: `) }, variable);
  refused({ ...ADMIN, MIRROR: 'Hosted/Parcels.MapServer', MIRROR_DATABASE_URL: DATABASE }, 'MIRROR');
  refused({ ...ADMIN, MIRROR: 'Hosted/Parcels.FeatureServer', MIRROR_DATABASE_URL: 'mysql://x/y' }, 'MIRROR_DATABASE_URL');
  refused({ ...ADMIN, MIRROR: 'Hosted/Parcels.FeatureServer', MIRROR_DATABASE_URL: DATABASE, MIRROR_SCHEMA: 'Bad-Name' }, 'MIRROR_SCHEMA');
});

t.test('services of CHANGES and MIRROR that neither REGISTER (names or patterns) nor POLL brings edits of are named', async (t) => {
  const config = (env: Record<string, string>) =>
    loadConfig({ ...ADMIN, MIRROR_DATABASE_URL: DATABASE, MIRROR: 'Hosted/Parcels.FeatureServer,Roads.FeatureServer', ...env });
  t.same(servicesWithoutEdits(config({})), ['Hosted/Parcels.FeatureServer', 'Roads.FeatureServer']);
  t.same(servicesWithoutEdits(config({ REGISTER: 'Hosted/*', POLL: 'Roads.FeatureServer' })), []);
  t.same(servicesWithoutEdits(config({ REGISTER: 'Roads.FeatureServer', CHANGES: 'Hosted/Trees.FeatureServer' })), [
    'Hosted/Trees.FeatureServer',
    'Hosted/Parcels.FeatureServer',
  ]);
  t.same(servicesWithoutEdits(loadConfig({})), [], 'nothing followed, nothing named');
});
