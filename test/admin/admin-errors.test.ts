import t from 'tap';
import { createAdminClient, type AdminClient } from '../../src/admin/admin-client.js';
import { AdminApiError, AdminAuthError } from '../../src/errors.js';
import { startEmulator } from '../helpers/emulator.js';
import { startSink } from '../helpers/http-sink.js';
import { connectionRefused, jsonAnswer, recordingFetch, rejectionOf } from './helpers/recording-fetch.js';

const GP = 'Tools/Buffer.GPServer';
const hookUrl = 'http://127.0.0.1:9/h';

/** Every text of an error a person or a log could see. */
const textsOf = (err: unknown): string[] => {
  const error = err as AdminApiError;
  return [
    error.message,
    error.url,
    JSON.stringify(error.messages),
    String(JSON.stringify(error.response)),
    String(error.stack),
    JSON.stringify(error),
  ];
};

t.test('an unknown webhook is the admin error shape: AdminApiError with the server code, messages and URL', async (t) => {
  const emulator = await startEmulator(t);
  const client = createAdminClient({ baseUrl: emulator.baseUrl, auth: { username: 'admin', password: 'admin.pass' } });
  const err = await rejectionOf(client.webhooks.get(GP, 'no-such-id'));
  t.ok(err instanceof AdminApiError);
  t.notOk(err instanceof AdminAuthError);
  t.match(err, {
    name: 'AdminApiError',
    code: 'GEOHOOK_ERR_ADMIN_API',
    serverCode: 404,
    messages: ["Webhook 'no-such-id' does not exist on service 'Buffer.GPServer'."],
    url: `${emulator.baseUrl}/services/Tools/Buffer.GPServer/webhooks/no-such-id`,
    response: { status: 'error', code: 404 },
  });
  t.equal(
    (err as Error).message,
    "/arcgis/admin/services/Tools/Buffer.GPServer/webhooks/no-such-id: Webhook 'no-such-id' does not exist on service 'Buffer.GPServer'. (code 404)",
  );
});

t.test('a parameter the server refuses is its 400 with the message naming it', async (t) => {
  const emulator = await startEmulator(t);
  const client = createAdminClient({ baseUrl: emulator.baseUrl, auth: { username: 'admin', password: 'admin.pass' } });
  await t.rejects(client.webhooks.create('Hosted/Parcels.FeatureServer', { name: 'x', hookUrl, changeTypes: ['FeaturesMoved'] }), {
    serverCode: 400,
    message: /changeTypes.*'FeaturesMoved' is not one of/,
  });
});

t.test('a non-JSON answer (an HTML error page) is an AdminApiError with the HTTP status', async (t) => {
  const sink = await startSink(t, (_request, response) =>
    response.writeHead(502, { 'content-type': 'text/html' }).end('<html>proxy error</html>'),
  );
  const client = createAdminClient({ baseUrl: `${sink.url}/arcgis/admin`, auth: { token: 't' }, retry: { delaysMs: [0] } });
  await t.rejects(client.findServices(), {
    code: 'GEOHOOK_ERR_ADMIN_API',
    serverCode: 502,
    messages: ['HTTP 502 Bad Gateway'],
    response: '<html>proxy error</html>',
  });
  t.equal(sink.received.length, 2, 'a read: retried once on the 5xx');
  const ok = await startSink(t, (_request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end('<html>login</html>'));
  const login = createAdminClient({ baseUrl: `${ok.url}/arcgis/admin` });
  await t.rejects(login.webhooks.listOrganization(), {
    serverCode: undefined,
    message: '/arcgis/admin/services/webhooks: the answer is not JSON (HTTP 200)',
  });
});

t.test('invalid webhook parameters are refused before any request', async (t) => {
  const recorder = recordingFetch([new Error('no request may be made')]);
  const client = createAdminClient({ baseUrl: 'http://127.0.0.1:9/arcgis/admin', auth: { token: 't' }, fetch: recorder.fetch });
  await t.rejects(client.webhooks.create(GP, { name: '', hookUrl }), {
    code: 'GEOHOOK_ERR_ADMIN_INVALID',
    message: 'name: must be a non-empty string, got ""',
  });
  await t.rejects(client.webhooks.create(GP, { name: 'n', hookUrl: 'ftp://x' }), {
    code: 'GEOHOOK_ERR_ADMIN_INVALID',
    message: /^hookUrl: must be an http or https URL/,
  });
  await t.rejects(client.webhooks.edit(GP, 'id', { hookUrl: '' }), { code: 'GEOHOOK_ERR_ADMIN_INVALID', message: /^hookUrl: / });
  await t.rejects(client.webhooks.get(GP, ''), { code: 'GEOHOOK_ERR_ADMIN_INVALID', message: /^id: / });
  await t.rejects(client.webhooks.listAll('Tools/Buffer'), {
    code: 'GEOHOOK_ERR_ADMIN_INVALID',
    message: /^service: must be folder\/name\.Type/,
  });
  t.equal(recorder.requests.length, 0);
  t.throws(() => createAdminClient({ baseUrl: 'not a url' }), { code: 'GEOHOOK_ERR_ADMIN_INVALID', message: /^baseUrl: / });
  t.throws(() => createAdminClient({ baseUrl: 'ftp://gis/arcgis/admin' }), {
    code: 'GEOHOOK_ERR_ADMIN_INVALID',
    message: 'baseUrl: must be an http or https URL, got ftp:',
  });
});

t.test('the token travels in the body of every request, never in a URL', async (t) => {
  const emulator = await startEmulator(t);
  const recorder = recordingFetch();
  const client = createAdminClient({
    baseUrl: emulator.baseUrl,
    auth: { username: 'orgadmin', password: 'orgadmin.pass' },
    fetch: recorder.fetch,
  });
  const operations: ((c: AdminClient) => Promise<unknown>)[] = [
    async (c) => {
      const { id } = await c.webhooks.create(GP, { name: 'h', hookUrl });
      await c.webhooks.get(GP, id);
      await c.webhooks.edit(GP, id, { active: true });
      await c.webhooks.notificationStatus(GP, id);
      await c.webhooks.delete(GP, id);
    },
    (c) => c.webhooks.list(GP, { start: 1, num: 5 }),
    (c) => c.webhooks.listAll(GP),
    (c) => c.webhooks.activateAll(GP),
    (c) => c.webhooks.deactivateAll(GP),
    (c) => c.webhooks.deleteAll(GP),
    (c) => c.webhooks.listOrganization(),
    (c) => c.settings.get(),
    (c) => c.settings.set({ notificationAttempts: 4 }),
    (c) => c.placement.get(GP),
    (c) => c.findServices({ folderName: 'Tools' }),
    (c) => c.updateDefinition('Hosted/Roads.FeatureServer', { syncEnabled: false }),
  ];
  for (const operation of operations) await operation(client);
  const operationRequests = recorder.requests.filter((request) => !request.url.endsWith('/generateToken'));
  t.equal(operationRequests.length, 16);
  const token = operationRequests[0]!.form.get('token')!;
  t.ok(token.length > 10, 'a token was sent');
  for (const request of recorder.requests) {
    t.notOk(request.url.includes('token=') || request.url.includes(token) || request.url.includes('?'), `no query string: ${request.url}`);
    t.equal(request.method, 'POST');
    t.equal(request.contentType, 'application/x-www-form-urlencoded');
  }
  t.ok(
    operationRequests.every((request) => request.form.get('token') === token && request.form.get('f') === 'json'),
    'token and f=json in every body',
  );
});

t.test('the token appears in no error: server errors, auth errors, network errors and timeouts', async (t) => {
  const timer = setInterval(() => undefined, 1000);
  t.teardown(() => clearInterval(timer));
  const emulator = await startEmulator(t);
  const token = await emulator.token('viewer');
  const errors: unknown[] = [];
  const viewer = createAdminClient({ baseUrl: emulator.baseUrl, auth: { token } });
  errors.push(await rejectionOf(viewer.settings.get()), await rejectionOf(viewer.webhooks.create(GP, { name: 'n', hookUrl })));
  await emulator.control('clock', { advanceDays: 1 });
  errors.push(await rejectionOf(viewer.findServices()));
  const failing = recordingFetch([
    connectionRefused(),
    'hang',
    jsonAnswer({ status: 'error', messages: [`Invalid token '${token}'.`], code: 498 }),
  ]);
  const scripted = createAdminClient({
    baseUrl: emulator.baseUrl,
    auth: { token },
    fetch: failing.fetch,
    timeoutMs: 50,
    retry: { delaysMs: [] },
  });
  errors.push(
    await rejectionOf(scripted.webhooks.deleteAll(GP)),
    await rejectionOf(scripted.findServices()),
    await rejectionOf(scripted.findServices()),
  );
  t.match(
    errors.map((err) => (err as AdminApiError).code),
    [
      'GEOHOOK_ERR_ADMIN_API',
      'GEOHOOK_ERR_ADMIN_API',
      'GEOHOOK_ERR_ADMIN_AUTH',
      'GEOHOOK_ERR_ADMIN_API',
      'GEOHOOK_ERR_ADMIN_API',
      'GEOHOOK_ERR_ADMIN_AUTH',
    ],
  );
  for (const err of errors) for (const text of textsOf(err)) t.notOk(text.includes(token), `no token in: ${text.slice(0, 120)}`);
  t.equal(
    (errors[5] as Error).message,
    "/arcgis/admin/services/findServices: Invalid token '[redacted]'. (code 498)",
    'an echoed token is redacted',
  );
  const refused = (() => {
    try {
      return createAdminClient({ baseUrl: `${emulator.baseUrl}?token=${token}` });
    } catch (err) {
      return err;
    }
  })();
  t.match(refused, { code: 'GEOHOOK_ERR_ADMIN_INVALID', message: /^baseUrl: must have no query string/ });
  for (const text of textsOf(refused)) t.notOk(text?.includes(token), 'a base URL with a token is refused without echoing it');
});
