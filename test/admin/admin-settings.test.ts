import t from 'tap';
import { createAdminClient } from '../../src/admin/admin-client.js';
import { defaultWebhookSettings } from '../../src/arcgis/webhook-settings.js';
import { AdminApiError } from '../../src/errors.js';
import { startEmulator } from '../helpers/emulator.js';
import { recordingFetch, rejectionOf } from './helpers/recording-fetch.js';

t.test('settings.get posts no setting and returns the current settings without status', async (t) => {
  const emulator = await startEmulator(t);
  const recorder = recordingFetch();
  const client = createAdminClient({ baseUrl: emulator.baseUrl, auth: { token: await emulator.token('orgadmin') }, fetch: recorder.fetch });
  t.same(await client.settings.get(), defaultWebhookSettings);
  const [request] = recorder.requests;
  t.equal(request!.url, `${emulator.baseUrl}/services/webhooks/settings`);
  t.same([...request!.form.keys()].sort(), ['f', 'token'], 'only f and token');
});

t.test('settings.set as an organisation administrator changes the given settings and returns all of them', async (t) => {
  const emulator = await startEmulator(t);
  const client = createAdminClient({ baseUrl: emulator.baseUrl, auth: { username: 'orgadmin', password: 'orgadmin.pass' } });
  const changed = await client.settings.set({ notificationAttempts: 5, daysInPast: 30 });
  t.same(changed, { ...defaultWebhookSettings, notificationAttempts: 5, daysInPast: 30 });
  t.same(await client.settings.get(), changed, 'kept by the server');
});

t.test('settings as a viewer is the server 403 in the admin shape', async (t) => {
  const emulator = await startEmulator(t);
  const client = createAdminClient({ baseUrl: emulator.baseUrl, auth: { username: 'viewer', password: 'viewer.pass' } });
  const err = await rejectionOf(client.settings.get());
  t.ok(err instanceof AdminApiError);
  t.match(err, {
    code: 'GEOHOOK_ERR_ADMIN_API',
    serverCode: 403,
    messages: [/not authorized to perform 'webhook settings'/],
    url: `${emulator.baseUrl}/services/webhooks/settings`,
  });
  t.match((err as Error).message, /^\/arcgis\/admin\/services\/webhooks\/settings: User 'viewer' is not authorized .* \(code 403\)$/);
});

t.test('settings out of bounds are refused before any request, naming the field and what is allowed', async (t) => {
  const recorder = recordingFetch([new Error('no request may be made')]);
  const client = createAdminClient({
    baseUrl: 'http://127.0.0.1:9/arcgis/admin',
    auth: { username: 'u', password: 'p' },
    fetch: recorder.fetch,
  });
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ notificationAttempts: 0 }, /^settings\.notificationAttempts: must be an integer from 1 to 5, got 0$/],
    [{ notificationAttempts: 6 }, /notificationAttempts: must be an integer from 1 to 5, got 6/],
    [{ notificationTimeOutInSeconds: 61 }, /notificationTimeOutInSeconds: must be an integer from 1 to 60, got 61/],
    [{ notificationTimeOutInSeconds: 0 }, /notificationTimeOutInSeconds: .* from 1 to 60/],
    [{ notificationElapsedTimeInSeconds: 3601 }, /notificationElapsedTimeInSeconds: must be an integer from 1 to 3600, got 3601/],
    [{ notificationElapsedTimeInSeconds: 0 }, /notificationElapsedTimeInSeconds: .* from 1 to 3600/],
    [{ numberOfFailures: 101 }, /numberOfFailures: must be an integer from 1 to 100, got 101/],
    [{ numberOfFailures: 0 }, /numberOfFailures: .* from 1 to 100/],
    [{ daysInPast: 31 }, /daysInPast: must be an integer from 1 to 30, got 31/],
    [{ daysInPast: 0 }, /daysInPast: .* from 1 to 30/],
    [{ notificationAttempts: 2.5 }, /notificationAttempts: must be an integer from 1 to 5, got 2.5/],
    [{ notificationAttempts: '3' }, /notificationAttempts: must be an integer from 1 to 5, got "3"/],
    [{ notificationAttempt: 3 }, /settings\.notificationAttempt: unknown setting, must be one of notificationAttempts, /],
  ];
  for (const [settings, message] of cases) {
    await t.rejects(
      client.settings.set(settings),
      { code: 'GEOHOOK_ERR_ADMIN_INVALID', statusCode: 400, message },
      JSON.stringify(settings),
    );
  }
  t.equal(recorder.requests.length, 0, 'no request was made');
});

t.test('settings at the bounds are accepted', async (t) => {
  const emulator = await startEmulator(t);
  const client = createAdminClient({ baseUrl: emulator.baseUrl, auth: { username: 'orgadmin', password: 'orgadmin.pass' } });
  const low = {
    notificationAttempts: 1,
    notificationTimeOutInSeconds: 1,
    notificationElapsedTimeInSeconds: 1,
    numberOfFailures: 1,
    daysInPast: 1,
  };
  t.same(await client.settings.set(low), low);
  const high = {
    notificationAttempts: 5,
    notificationTimeOutInSeconds: 60,
    notificationElapsedTimeInSeconds: 3600,
    numberOfFailures: 100,
    daysInPast: 30,
  };
  t.same(await client.settings.set(high), high);
});
