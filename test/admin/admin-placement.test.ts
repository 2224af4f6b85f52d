import t from 'tap';
import { createAdminClient } from '../../src/admin/admin-client.js';
import type { ServicePlacementPolicy } from '../../src/arcgis/placement-policy.js';
import { startEmulator } from '../helpers/emulator.js';
import { fixture } from '../helpers/paths.js';
import { recordingFetch } from './helpers/recording-fetch.js';

const policy = JSON.parse(fixture('placement-policy.json').toString('utf8')) as ServicePlacementPolicy;

t.test('placement.edit sends the policy as JSON and placement.get returns it', async (t) => {
  const emulator = await startEmulator(t);
  const recorder = recordingFetch();
  const client = createAdminClient({
    baseUrl: emulator.baseUrl,
    auth: { username: 'admin', password: 'admin.pass' },
    fetch: recorder.fetch,
  });
  t.same(await client.placement.get('Tools/Buffer.GPServer'), { placementPolicy: [] }, 'none yet');
  t.equal(await client.placement.edit('Tools/Buffer.GPServer', policy), undefined);
  const edit = recorder.requests.at(-1)!;
  t.equal(edit.url, `${emulator.baseUrl}/services/Tools/Buffer.GPServer/placementPolicy/edit`);
  t.same(JSON.parse(edit.form.get('servicePlacementPolicy')!), policy);
  t.notOk(edit.form.has('async'), 'the async flag is sent only when given');
  t.same(await client.placement.get('Tools/Buffer.GPServer'), policy);
});

t.test('placement.edit with async sends async=true', async (t) => {
  const emulator = await startEmulator(t);
  const recorder = recordingFetch();
  const client = createAdminClient({
    baseUrl: emulator.baseUrl,
    auth: { username: 'admin', password: 'admin.pass' },
    fetch: recorder.fetch,
  });
  await client.placement.edit('Buffer.GPServer', policy, { async: true });
  t.equal(recorder.requests.at(-1)!.form.get('async'), 'true');
});

t.test('an invalid placement policy is refused before any request, naming the path and what is allowed', async (t) => {
  const recorder = recordingFetch([new Error('no request may be made')]);
  const client = createAdminClient({ baseUrl: 'http://127.0.0.1:9/arcgis/admin', auth: { token: 't' }, fetch: recorder.fetch });
  const bad = structuredClone(policy) as unknown as { placementPolicy: { podPlacementPolicy: { tolerations: { operator: string }[] } }[] };
  bad.placementPolicy[0]!.podPlacementPolicy.tolerations[0]!.operator = 'Matches';
  await t.rejects(client.placement.edit('Buffer.GPServer', bad as unknown as ServicePlacementPolicy), {
    code: 'GEOHOOK_ERR_ADMIN_INVALID',
    statusCode: 400,
    message:
      'servicePlacementPolicy: placementPolicy[0].podPlacementPolicy.tolerations[0].operator: must be Exists or Equal, got "Matches"',
  });
  await t.rejects(client.placement.edit('Buffer.GPServer', { placementPolicy: [] }), {
    code: 'GEOHOOK_ERR_ADMIN_INVALID',
    message: /placementPolicy: must be a non-empty array/,
  });
  await t.rejects(client.placement.get('Buffer'), { code: 'GEOHOOK_ERR_ADMIN_INVALID' });
  t.equal(recorder.requests.length, 0, 'no request was made');
});
