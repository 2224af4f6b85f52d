import fc from 'fast-check';
import t from 'tap';
import { startEmulator } from '../helpers/emulator.js';

/** The emulator's admin API under random input: admin-shape answers only, never a 5xx, a stack trace or a crash. */
const RUNS = 3_000;

const services = ['Tools/Buffer.GPServer', 'Tools/Geocode.GPServer', 'Hosted/Parcels.FeatureServer', 'Hosted/Roads.FeatureServer', 'Basemaps/World.MapServer', 'Nope/Missing.GPServer'];
const operations = [
  'webhooks/create',
  'webhooks/activateAll',
  'webhooks/deactivateAll',
  'webhooks/deleteAll',
  'webhooks',
  'webhooks/wh1',
  'webhooks/wh1/edit',
  'webhooks/wh1/delete',
  'webhooks/wh1/notificationStatus',
  'placementPolicy',
  'placementPolicy/edit',
];
const paramNames = ['name', 'hookUrl', 'active', 'changeTypes', 'signatureKey', 'contentType', 'payloadFormat', 'f', 'placementPolicy', 'updateDefinition', 'serviceType', 'folder', 'num', 'start', 'numberOfFailures', 'daysInPast', 'notificationAttempts', 'x'];

const value = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.json({ maxDepth: 3 }),
  fc.constantFrom('true', 'false', '*', 'json', 'pjson', 'http://127.0.0.1:1/webhooks/default', '-1', '1e309', 'NaN', '{', '[]', '{"capabilities":7}'),
  fc.string({ minLength: 10_000, maxLength: 60_000 }),
);

t.test(`${RUNS.toLocaleString('en')} random admin requests get admin-shape answers`, async (t) => {
  const emulator = await startEmulator(t);
  const token = await emulator.token('admin');
  const path = fc.oneof(
    fc.tuple(fc.constantFrom(...services), fc.constantFrom(...operations)).map(([service, operation]) => `services/${service}/${operation}`),
    fc.constantFrom('services/findServices', 'services/webhooks', 'services/Hosted/Parcels/FeatureServer/updateDefinition', 'settings/webhooks', 'settings/webhooks/update', 'generateToken'),
    fc.webPath().map((random) => `services${random}`),
  );
  await fc.assert(
    fc.asyncProperty(path, fc.dictionary(fc.constantFrom(...paramNames), value, { maxKeys: 6 }), fc.constantFrom('valid', 'none', 'bad'), async (target, params, auth) => {
      const form = new URLSearchParams({ f: 'json', ...params, ...(auth === 'valid' ? { token } : auth === 'bad' ? { token: 'not-a-token' } : {}) });
      const response = await emulator.app.inject({
        method: 'POST',
        url: `/arcgis/admin/${target}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: form.toString(),
      });
      if (response.statusCode >= 500) throw new Error(`${response.statusCode} for ${target}: ${response.body.slice(0, 300)}`);
      if (/\n\s+at /.test(response.body)) throw new Error(`a stack trace for ${target}: ${response.body.slice(0, 300)}`);
      const body = JSON.parse(response.body) as { status?: string; messages?: unknown; code?: unknown };
      if (body.status === 'error' && !(Array.isArray(body.messages) && typeof body.code === 'number')) throw new Error(`not the admin error shape: ${response.body.slice(0, 300)}`);
      return true;
    }),
    { numRuns: RUNS },
  );
  t.equal((await emulator.app.inject({ method: 'GET', url: '/emulator/webhooks' })).statusCode, 200, 'still serving');
});
