import t from 'tap';
import { runCli } from '../../helpers/cli.js';
import { startEmulator } from '../../helpers/emulator.js';
import { answerWith, startSink } from '../../helpers/http-sink.js';

// Each test spawns geohook processes, which take several times their quiet duration on a loaded two-core machine.
t.setTimeout(2 * 60_000);

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

t.test('geohook admin tries a read twice when the admin API fails, then says so and exits 1', async (t) => {
  const sink = await startSink(t, answerWith(503));
  const result = await runCli(['admin', 'settings'], { env: { ADMIN_URL: `${sink.url}/arcgis/admin`, ADMIN_TOKEN: 't' } });
  t.equal(result.code, 1);
  t.match(result.stderr, /^geohook: .*503/);
  t.equal(sink.received.length, 2, 'the read and one retry');
});

t.test('geohook admin without ADMIN_URL says what is missing in one line', async (t) => {
  const result = await runCli(['admin', 'find']);
  t.equal(result.code, 1);
  t.equal(result.stderr, 'geohook: ADMIN_URL: required (the admin root, e.g. http://127.0.0.1:7080/arcgis/admin), or pass --admin-url\n');
});
