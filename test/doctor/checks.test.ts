import t from 'tap';
import { createAdminClient } from '../../src/admin/admin-client.js';
import { trustedUrls } from '../../src/arcgis/trusted-urls.js';
import { defaultWebhookSettings } from '../../src/arcgis/webhook-settings.js';
import { createServiceSession } from '../../src/arcgis-request/service-session.js';
import { answersCheck, httpsCheck, settingsChecks } from '../../src/doctor/delivery-checks.js';
import { checkService, type ServiceCheckContext } from '../../src/doctor/service-checks.js';
import { findFreePort } from '../../src/embedded/redis-server.js';
import { startEmulator } from '../helpers/emulator.js';

const settings = { ...defaultWebhookSettings };

t.test('settings: the timeout against the measured acknowledgement, and the attempts', async (t) => {
  t.match(settingsChecks(settings, 20, undefined), [
    { id: 'settings.timeout', ok: true },
    { id: 'settings.attempts', ok: true },
  ]);
  t.match(settingsChecks(settings, 4000, undefined)[0], { ok: false, severity: 'warning', fix: /--notification-timeout 16$/ });
  t.match(settingsChecks(settings, 30_000, undefined)[0], { ok: false, severity: 'error', message: /30000 ms/ });
  t.match(settingsChecks(settings, 200_000, undefined)[0], { fix: /--notification-timeout 60$/ }, 'within the bounds of the setting');
  t.match(settingsChecks(settings, undefined, undefined)[0], { ok: false, severity: 'warning', message: /no acknowledgement/ });
  t.match(settingsChecks({ ...settings, notificationAttempts: 1 }, 20, undefined)[1], {
    ok: false,
    severity: 'warning',
    fix: 'geohook admin settings --notification-attempts 3',
  });
  t.match(settingsChecks(undefined, 20, 'Required role: orgadmin'), [
    { id: 'settings.read', ok: false, severity: 'warning', message: /orgadmin/ },
  ]);
});

t.test('the hookUrl: HTTPS or loopback, and something answers', async (t) => {
  t.match(httpsCheck('https://hooks.example.com/webhooks/default'), { ok: true, message: /HTTPS/ });
  t.match(httpsCheck('http://[::1]:8080/webhooks/default'), { ok: true, message: /loopback/ });
  t.match(httpsCheck('http://hooks.example.com/webhooks/default'), { ok: false, severity: 'warning', fix: /TLS proxy/ });
  const closed = `http://127.0.0.1:${await findFreePort()}/webhooks/default`;
  t.match(await answersCheck(closed, 'serve'), { ok: false, severity: 'error', message: /ECONNREFUSED/, fix: /start geohook serve/ });
  t.match(await answersCheck(closed, 'up'), { fix: 'start geohook up (npm start) again' }, 'the fix fits how geohook was started');
});

t.test('a non-hosted feature service: sync, versioned data and archiving are checked, with their fixes', async (t) => {
  const emulator = await startEmulator(t, {
    catalog: [
      {
        folderName: 'Gdb',
        serviceName: 'Pipes',
        type: 'FeatureServer',
        hosted: false,
        versioned: true,
        archiving: false,
        capabilities: 'Query,Editing,ChangeTracking,Sync',
        syncEnabled: true,
      },
      { folderName: 'Gdb', serviceName: 'Valves', type: 'FeatureServer', hosted: false, archiving: true, capabilities: 'Query' },
    ],
  });
  const auth = { username: 'admin', password: 'admin.pass', tokenUrl: `${emulator.baseUrl}/generateToken` };
  const session = createServiceSession({ auth, trusted: trustedUrls([emulator.url]) });
  const context: ServiceCheckContext = {
    client: createAdminClient({ baseUrl: emulator.baseUrl, auth }),
    adminUrl: emulator.baseUrl,
    readRest: (url) => session.read(url),
  };
  const pipes = await checkService('Gdb/Pipes.FeatureServer', context);
  t.equal(pipes.takesWebhooks, false);
  const failed = Object.fromEntries(pipes.checks.filter((check) => !check.ok).map((check) => [check.id, check]));
  t.same(Object.keys(failed).sort(), ['feature.archiving', 'feature.nonversioned', 'feature.sync']);
  t.match(failed['feature.sync'], { fix: /--capabilities Query,Editing,ChangeTracking --sync-enabled false/ });
  const valves = await checkService('Gdb/Valves.FeatureServer', context);
  t.match(
    valves.checks.filter((check) => !check.ok),
    [
      { id: 'feature.editing', fix: /--capabilities Query,Editing,ChangeTracking / },
      { id: 'feature.change-tracking', fix: /updateDefinition=\{"capabilities":"Query,Editing,ChangeTracking","syncEnabled":false\}/ },
    ],
  );
  t.match(
    valves.checks.find((check) => check.id === 'feature.archiving'),
    { ok: true },
  );
  t.match((await checkService('Gdb/Nope.FeatureServer', context)).checks, [{ id: 'service.exists', ok: false, fix: /geohook admin find/ }]);
});
