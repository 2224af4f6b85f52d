import t from 'tap';
import { startEmulator } from '../helpers/emulator.js';

/** The emulator inputs that fuzzing found answered with an internal error or a non-admin body. */
const deep = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);
const HOOK = { name: 'fuzz', hookUrl: 'http://127.0.0.1:1/webhooks/default' };

t.test('hostile JSON-valued parameters are a 400, not an internal error', async (t) => {
  const emulator = await startEmulator(t);
  const create = 'services/Hosted/Parcels.FeatureServer/webhooks/create';
  const placement = 'services/Tools/Buffer.GPServer/placementPolicy/edit';
  for (const [what, path, params] of [
    ['changeTypes nested 5,000 deep', create, { ...HOOK, changeTypes: `[${deep(5_000)}]` }],
    ['changeTypes holding a number', create, { ...HOOK, changeTypes: '[1]' }],
    ['scheduleInfo null', create, { ...HOOK, scheduleInfo: 'null' }],
    ['scheduleInfo an array', create, { ...HOOK, scheduleInfo: '[]' }],
    ['a placement entry nested 5,000 deep', placement, { servicePlacementPolicy: `{"placementPolicy":[${deep(5_000)}]}` }],
    ['a placement policy nested 5,000 deep', placement, { servicePlacementPolicy: deep(5_000) }],
  ] as const) {
    t.match(await emulator.admin(path, params), { status: 'error', code: 400 }, what);
  }
  t.same(await emulator.admin('services/webhooks'), { webhooks: [] }, 'none was stored');
});

t.test('a malformed or over-long path gets the admin error shape with HTTP 200', async (t) => {
  const emulator = await startEmulator(t);
  for (const path of ['%', `services/Tools/Buffer.GPServer/webhooks/${'x'.repeat(200)}`]) {
    const response = await emulator.app.inject({
      method: 'POST',
      url: `/arcgis/admin/${path}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'f=json',
    });
    t.equal(response.statusCode, 200, `${path.slice(0, 40)}: HTTP 200`);
    t.match(JSON.parse(response.body), { status: 'error', code: 400 });
  }
});
