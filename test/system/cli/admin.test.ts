import t from 'tap';
import { sign } from '../../../src/signature/sign.js';
import { runCli } from '../../helpers/cli.js';
import { startEmulator } from '../../helpers/emulator.js';
import { startSink } from '../../helpers/http-sink.js';

const hookUrl = 'http://127.0.0.1:8080/webhooks/default';

t.test('geohook admin create, list --table, get and delete drive the webhooks of a service', async (t) => {
  const emulator = await startEmulator(t);
  const env = { ADMIN_URL: emulator.baseUrl, ADMIN_USERNAME: 'admin', ADMIN_PASSWORD: 'admin.pass' };
  const created = await runCli(
    ['admin', 'create', 'Tools/Buffer.GPServer', '--name', 'cli-hook', '--hook-url', hookUrl, '--signature-key', 'k', '--active'],
    { env },
  );
  t.equal(created.code, 0, created.stderr);
  const webhook = JSON.parse(created.stdout) as { id: string; active: boolean; name: string };
  t.match(webhook, { name: 'cli-hook', active: true, signatureKey: 'k' });

  const table = await runCli(['admin', 'list', 'Tools/Buffer.GPServer', '--table'], { env });
  t.equal(table.code, 0, table.stderr);
  const lines = table.stdout.trimEnd().split('\n');
  t.match(lines[0], /^id\s+folderName\s+serviceName\s+name\s+active\s+hookUrl\s+changeTypes$/);
  t.match(lines[1], new RegExp(`^${webhook.id}\\s+Tools\\s+Buffer\\s+cli-hook\\s+true\\s+`));

  const got = await runCli(['admin', 'get', 'Tools/Buffer.GPServer', webhook.id], { env });
  t.match(JSON.parse(got.stdout), { id: webhook.id });
  const deleted = await runCli(['admin', 'delete', 'Tools/Buffer.GPServer', webhook.id], { env });
  t.same(JSON.parse(deleted.stdout), { status: 'success' });
  const gone = await runCli(['admin', 'get', 'Tools/Buffer.GPServer', webhook.id], { env });
  t.equal(gone.code, 1);
  t.match(gone.stderr, /^geohook: .*Webhook '.*' does not exist.*\(code 404\)\n$/);
});

t.test('geohook admin settings reads, and changes from flags or a file, as an organisation administrator', async (t) => {
  const emulator = await startEmulator(t);
  const env = { ADMIN_URL: emulator.baseUrl, ADMIN_USERNAME: 'orgadmin', ADMIN_PASSWORD: 'orgadmin.pass' };
  t.match(JSON.parse((await runCli(['admin', 'settings'], { env })).stdout), { notificationAttempts: 3, daysInPast: 5 });
  const dir = t.testdir({ 'settings.json': JSON.stringify({ numberOfFailures: 7 }) });
  const changed = await runCli(['admin', 'settings', '--file', `${dir}/settings.json`, '--notification-attempts', '4'], { env });
  t.equal(changed.code, 0, changed.stderr);
  t.match(JSON.parse(changed.stdout), { notificationAttempts: 4, numberOfFailures: 7 });
  const invalid = await runCli(['admin', 'settings', '--notification-attempts', '9'], { env });
  t.equal(invalid.code, 1);
  t.match(invalid.stderr, /notificationAttempts/);
});

t.test('geohook admin reports a role error with the server message and a non-zero exit', async (t) => {
  const emulator = await startEmulator(t);
  const result = await runCli(['admin', 'settings', '--days-in-past', '3'], {
    env: { ADMIN_URL: emulator.baseUrl, ADMIN_TOKEN: await emulator.token('admin') },
  });
  t.equal(result.code, 1);
  t.match(result.stderr, /not authorized to perform 'webhook settings'.*\(code 403\)/);
  t.equal(result.stdout, '');
});

t.test('geohook admin find, update-definition and token', async (t) => {
  const emulator = await startEmulator(t);
  const env = { ADMIN_URL: emulator.baseUrl, ADMIN_USERNAME: 'admin', ADMIN_PASSWORD: 'admin.pass' };
  const found = JSON.parse((await runCli(['admin', 'find', '--folder', 'Hosted', '--type', 'FeatureServer'], { env })).stdout) as {
    serviceName: string;
  }[];
  t.same(
    found.map((service) => service.serviceName),
    ['Parcels', 'Roads', 'Zoning'],
  );
  const updated = await runCli(
    [
      'admin',
      'update-definition',
      'Hosted/Roads.FeatureServer',
      '--capabilities',
      'Query,Editing,ChangeTracking',
      '--sync-enabled',
      'false',
    ],
    { env },
  );
  t.equal(updated.code, 0, updated.stderr);
  const roads = await runCli(
    [
      'admin',
      'create',
      'Hosted/Roads.FeatureServer',
      '--name',
      'roads',
      '--hook-url',
      hookUrl,
      '--change-types',
      'FeaturesCreated,FeaturesDeleted',
    ],
    { env },
  );
  t.match(JSON.parse(roads.stdout), { changeTypes: ['FeaturesCreated', 'FeaturesDeleted'] });
  const token = await runCli(['admin', 'token', '--expiration', '5'], { env });
  t.match(JSON.parse(token.stdout), { token: String, expires: Number });
});

t.test('geohook admin placement explain says where pods may run, without a server', async (t) => {
  const dir = t.testdir({
    'policy.json': JSON.stringify({
      placementPolicy: [
        {
          deploymentId: 'buffer',
          deploymentType: 'GPServer',
          podPlacementPolicy: {
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: {
                nodeSelectorTerms: [{ matchExpressions: [{ key: 'workload', operator: 'In', values: ['gis'] }] }],
              },
            },
            tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gis', effect: 'NoSchedule' }],
          },
        },
      ],
    }),
    'nodes.json': JSON.stringify([
      { name: 'gis-1', labels: { workload: 'gis' }, taints: [{ key: 'dedicated', value: 'gis', effect: 'NoSchedule' }] },
      { name: 'web-1', labels: { workload: 'web' } },
    ]),
  });
  const result = await runCli(['admin', 'placement', 'explain', '--file', `${dir}/policy.json`, '--nodes', `${dir}/nodes.json`]);
  t.equal(result.code, 0, result.stderr);
  const verdicts = JSON.parse(result.stdout) as { node: string; schedulable: boolean; reasons: string[] }[];
  t.same(
    verdicts.map((verdict) => [verdict.node, verdict.schedulable]),
    [
      ['gis-1', true],
      ['web-1', false],
    ],
  );
  t.match(verdicts[1]!.reasons.join(' '), /workload/);
});

t.test('geohook admin without ADMIN_URL says what is missing in one line', async (t) => {
  const result = await runCli(['admin', 'find']);
  t.equal(result.code, 1);
  t.equal(result.stderr, 'geohook: ADMIN_URL: required (the admin root, e.g. http://127.0.0.1:7080/arcgis/admin), or pass --admin-url\n');
});

t.test('geohook admin placement edit takes the policy from --file or inline --policy, and get reads it back', async (t) => {
  const emulator = await startEmulator(t);
  const env = { ADMIN_URL: emulator.baseUrl, ADMIN_USERNAME: 'admin', ADMIN_PASSWORD: 'admin.pass' };
  const policy = {
    placementPolicy: [
      {
        deploymentId: 'b',
        deploymentType: 'GPServer',
        podPlacementPolicy: { nodeAffinity: {}, tolerations: [{ key: 'gpu', operator: 'Exists' }] },
      },
    ],
  };
  const inline = await runCli(['admin', 'placement', 'edit', 'Tools/Buffer.GPServer', '--policy', JSON.stringify(policy)], { env });
  t.equal(inline.code, 0, inline.stderr);
  t.same(JSON.parse((await runCli(['admin', 'placement', 'get', 'Tools/Buffer.GPServer'], { env })).stdout), policy);
  const dir = t.testdir({ 'policy.json': JSON.stringify(policy) });
  t.equal((await runCli(['admin', 'placement', 'edit', 'Hosted/Parcels.FeatureServer', '--file', `${dir}/policy.json`], { env })).code, 0);
  const neither = await runCli(['admin', 'placement', 'edit', 'Tools/Buffer.GPServer'], { env });
  t.equal(neither.stderr, 'geohook: --file or --policy: give exactly one\n');
  const broken = await runCli(['admin', 'placement', 'edit', 'Tools/Buffer.GPServer', '--policy', '{'], { env });
  t.equal(broken.stderr, 'geohook: --policy: not valid JSON\n');
});

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
