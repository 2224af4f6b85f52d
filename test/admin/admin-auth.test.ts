import t from 'tap';
import { createAdminClient } from '../../src/admin/admin-client.js';
import { generateToken } from '../../src/arcgis-request/generate-token.js';
import { AdminApiError, AdminAuthError } from '../../src/errors.js';
import { startEmulator } from '../helpers/emulator.js';
import { recordingFetch, rejectionOf } from './helpers/recording-fetch.js';

const GP = 'Tools/Buffer.GPServer';

t.test('generateToken exchanges credentials for a token and its expiry', async (t) => {
  const emulator = await startEmulator(t);
  const recorder = recordingFetch();
  const before = Date.now();
  const issued = await generateToken({
    tokenUrl: `${emulator.url}/arcgis/sharing/rest/generateToken`,
    username: 'admin',
    password: 'admin.pass',
    expirationMinutes: 5,
    fetch: recorder.fetch,
  });
  t.type(issued.token, 'string');
  t.ok(issued.expires >= before + 5 * 60_000 && issued.expires <= Date.now() + 5 * 60_000, 'expires in 5 minutes');
  const form = recorder.requests[0]!.form;
  t.match(Object.fromEntries(form), { username: 'admin', password: 'admin.pass', expiration: '5', f: 'json' });
  t.equal(recorder.requests[0]!.url, `${emulator.url}/arcgis/sharing/rest/generateToken`, 'nothing in the URL');
});

t.test('a wrong password at the portal generateToken is the portal error shape, without the password', async (t) => {
  const emulator = await startEmulator(t);
  const tokenUrl = `${emulator.url}/arcgis/sharing/rest/generateToken`;
  const err = await rejectionOf(generateToken({ tokenUrl, username: 'admin', password: 'wrong-Pa55word' }));
  t.ok(err instanceof AdminApiError);
  t.notOk(err instanceof AdminAuthError);
  t.match(err, {
    code: 'GEOHOOK_ERR_ADMIN_API',
    serverCode: 400,
    messages: ['Unable to generate token.', 'Invalid username or password.'],
    url: tokenUrl,
  });
  t.equal((err as Error).message, '/arcgis/sharing/rest/generateToken: Unable to generate token. Invalid username or password. (code 400)');
  t.notMatch(JSON.stringify(err) + String((err as Error).stack), 'wrong-Pa55word');
});

t.test('a client whose credentials are refused at tokenUrl rejects every operation with that error', async (t) => {
  const emulator = await startEmulator(t);
  const client = createAdminClient({
    baseUrl: emulator.baseUrl,
    auth: { username: 'admin', password: 'nope', tokenUrl: `${emulator.url}/arcgis/sharing/rest/generateToken` },
  });
  await t.rejects(client.webhooks.listAll(GP), {
    code: 'GEOHOOK_ERR_ADMIN_API',
    serverCode: 400,
    message: /^\/arcgis\/sharing\/rest\/generateToken: Unable to generate token/,
  });
  const adminShape = createAdminClient({ baseUrl: emulator.baseUrl, auth: { username: 'admin', password: 'nope' } });
  await t.rejects(
    adminShape.webhooks.listAll(GP),
    { serverCode: 400, message: /^\/arcgis\/admin\/generateToken: Unable to generate token/ },
    'default tokenUrl: {base_url}/generateToken',
  );
});

t.test('with credentials, an expired token (498) is renewed once and the operation succeeds', async (t) => {
  const emulator = await startEmulator(t);
  const recorder = recordingFetch();
  const client = createAdminClient({
    baseUrl: emulator.baseUrl,
    auth: { username: 'admin', password: 'admin.pass', expirationMinutes: 60 },
    fetch: recorder.fetch,
  });
  await client.webhooks.create(GP, { name: 'before', hookUrl: 'http://127.0.0.1:9/h' });
  const tokenRequests = () => recorder.requests.filter((request) => request.url.endsWith('/generateToken'));
  t.equal(tokenRequests().length, 1);
  const first = recorder.requests.at(-1)!.form.get('token');
  t.equal((await emulator.control('clock', { advanceDays: 1 })).status, 200);
  const before = recorder.requests.length;
  const hooks = await client.webhooks.listAll(GP);
  t.same(
    hooks.map((hook) => hook.name),
    ['before'],
  );
  t.equal(tokenRequests().length, 2, 'one new token');
  const sent = recorder.requests.slice(before).filter((request) => !request.url.endsWith('/generateToken'));
  t.equal(sent.length, 2, 'the list was sent twice: refused, then with the new token');
  t.equal(sent[0]!.form.get('token'), first);
  t.not(sent[1]!.form.get('token'), first);
  await client.webhooks.listAll(GP);
  t.equal(tokenRequests().length, 2, 'the new token is cached');
});

t.test('a write refused with 498 is renewed and sent once more too', async (t) => {
  const emulator = await startEmulator(t);
  const client = createAdminClient({ baseUrl: emulator.baseUrl, auth: { username: 'admin', password: 'admin.pass' } });
  await client.findServices();
  await emulator.control('clock', { advanceDays: 1 });
  await client.webhooks.create(GP, { name: 'after', hookUrl: 'http://127.0.0.1:9/h' });
  t.same(
    (await client.webhooks.listAll(GP)).map((hook) => hook.name),
    ['after'],
    'created exactly once',
  );
});

t.test('a static token that expired surfaces AdminAuthError without a retry', async (t) => {
  const emulator = await startEmulator(t);
  const recorder = recordingFetch();
  const client = createAdminClient({ baseUrl: emulator.baseUrl, auth: { token: await emulator.token('admin') }, fetch: recorder.fetch });
  await client.webhooks.listAll(GP);
  await emulator.control('clock', { advanceDays: 1 });
  const before = recorder.requests.length;
  const err = await rejectionOf(client.webhooks.listAll(GP));
  t.ok(err instanceof AdminAuthError);
  t.match(err, { code: 'GEOHOOK_ERR_ADMIN_AUTH', statusCode: 401, serverCode: 498, messages: ['Invalid token.', 'Token has expired.'] });
  t.equal(recorder.requests.length - before, 1, 'sent once');
});

t.test('no token at all is the server 499 as AdminAuthError', async (t) => {
  const emulator = await startEmulator(t);
  const client = createAdminClient({ baseUrl: emulator.baseUrl });
  await t.rejects(client.findServices(), { code: 'GEOHOOK_ERR_ADMIN_AUTH', serverCode: 499, message: /Token not found.*\(code 499\)$/ });
});

t.test('concurrent operations share one token request', async (t) => {
  const emulator = await startEmulator(t);
  const recorder = recordingFetch();
  const client = createAdminClient({
    baseUrl: emulator.baseUrl,
    auth: { username: 'admin', password: 'admin.pass' },
    fetch: recorder.fetch,
  });
  await Promise.all([client.findServices(), client.webhooks.listAll(GP), client.webhooks.listOrganization(), client.placement.get(GP)]);
  t.equal(recorder.requests.filter((request) => request.url.endsWith('/generateToken')).length, 1);
  await emulator.control('clock', { advanceDays: 1 });
  await Promise.all([client.findServices(), client.webhooks.listAll(GP), client.webhooks.listOrganization()]);
  t.equal(recorder.requests.filter((request) => request.url.endsWith('/generateToken')).length, 2, 'three 498s, one renewal');
});
