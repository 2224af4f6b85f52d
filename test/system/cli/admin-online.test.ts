import t from 'tap';
import { sign } from '../../../src/signature/sign.js';
import { runCli } from '../../helpers/cli.js';
import { startEmulator } from '../../helpers/emulator.js';
import { startSink } from '../../helpers/http-sink.js';

// Each test spawns geohook processes, which take several times their quiet duration on a loaded two-core machine.
t.setTimeout(2 * 60_000);

t.test('geohook admin drives an ArcGIS Online hosted feature layer: create (challenge passed), list, activate, delete', async (t) => {
  const emulator = await startEmulator(t);
  // A receiver that answers Online's challenge with the key given to the webhook.
  const sink = await startSink(t, (request, response) => {
    const token = new URL(request.url!, 'http://x').searchParams.get('crc_token');
    response.end(token === null ? '' : JSON.stringify({ response_token: sign('k', token) }));
  });
  const env = { ADMIN_URL: `${emulator.url}/geohookOrg/ArcGIS/rest/admin`, ADMIN_USERNAME: 'admin', ADMIN_PASSWORD: 'admin.pass' };
  const created = await runCli(
    ['admin', 'create', 'Parcels.FeatureServer', '--name', 'cli', '--hook-url', `${sink.url}/hook`, '--signature-key', 'k'],
    { env },
  );
  t.equal(created.code, 0, created.stderr);
  const webhook = JSON.parse(created.stdout) as { id: string };
  t.match(webhook, { serviceName: 'Parcels', active: false, folderName: '' });
  const listed = await runCli(['admin', 'list', 'Parcels.FeatureServer'], { env });
  t.match(JSON.parse(listed.stdout), [{ id: webhook.id }]);
  t.equal((await runCli(['admin', 'activate-all', 'Parcels.FeatureServer'], { env })).code, 0);
  t.match(JSON.parse((await runCli(['admin', 'get', 'Parcels.FeatureServer', webhook.id], { env })).stdout), { active: true });
  t.equal((await runCli(['admin', 'delete', 'Parcels.FeatureServer', webhook.id], { env })).code, 0);
  const refused = await runCli(['admin', 'list-all'], { env });
  t.equal(refused.code, 1);
  t.match(refused.stderr, /not an operation of ArcGIS Online/);
});
