import t, { type Test } from 'tap';
import { startEmulator, type TestEmulator } from '../helpers/emulator.js';
import type { Json } from '../helpers/json.js';
import { startReceiver, TEST_KEY } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';

// The emulator's ArcGIS Online organization driven as the ArcGIS API for Python's WebHookServiceManager
// drives a hosted feature layer's webhooks: POSTs to `<FeatureServer admin URL>/WebHooks`, the token in a
// header, records by globalId.

const redis = await startRedis(t);

interface Online {
  /** `<emulator>/geohookOrg/ArcGIS/rest/admin/services/<name>/FeatureServer/WebHooks` */
  webhooks(service: string): string;
  post(url: string, params?: Record<string, string>): Promise<Json>;
}

async function online(t: Test, emulator: TestEmulator): Promise<Online> {
  const generated = await fetch(`${emulator.url}/sharing/rest/generateToken`, {
    method: 'POST',
    body: new URLSearchParams({ username: 'admin', password: 'admin.pass', referer: 'http', client: 'referer', f: 'json' }),
  });
  const { token } = (await generated.json()) as { token: string };
  t.type(token, 'string', 'a token from the organization sharing/rest');
  return {
    webhooks: (service) => `${emulator.url}/geohookOrg/ArcGIS/rest/admin/services/${service}/FeatureServer/WebHooks`,
    post: async (url, params = {}) => {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'X-Esri-Authorization': `Bearer ${token}` },
        body: new URLSearchParams({ ...params, f: 'json' }),
      });
      return (await response.json()) as Json;
    },
  };
}

t.test('WebHookServiceManager: create (challenge passed), list, read, edit, activate, deactivate, delete', async (t) => {
  const emulator = await startEmulator(t);
  const receiver = await startReceiver(t, redis);
  const api = await online(t, emulator);
  const manager = api.webhooks('Parcels');
  t.same(await api.post(manager), [], 'the list is a bare JSON array');

  const hookUrl = `${receiver.url}/webhooks/default`;
  const created = (await api.post(`${manager}/create`, {
    name: 'geohook',
    changeTypes: 'FeaturesCreated,FeaturesUpdated',
    signatureKey: TEST_KEY,
    hookUrl,
    active: 'true',
    payloadFormat: 'json',
  })) as Record<string, Json>;
  t.match(created, { name: 'geohook', serviceName: 'Parcels', hookUrl, active: true, changeTypes: ['FeaturesCreated', 'FeaturesUpdated'] });
  t.match(created.globalId, /^[0-9a-f-]{36}$/, 'addressed by globalId');
  const hook = `${manager}/${String(created.globalId)}`;

  t.same(
    ((await api.post(manager)) as Array<{ globalId: string }>).map((item) => item.globalId),
    [created.globalId],
  );
  t.same(await api.post(hook), created, 'WebHook.properties POSTs to the webhook');
  t.match(await api.post(`${hook}/edit`, { name: 'renamed', active: 'false' }), {
    name: 'renamed',
    active: false,
    hookUrl,
    signatureKey: TEST_KEY,
  });
  t.same(await api.post(`${manager}/activateAll`), { success: true });
  t.match(await api.post(hook), { active: true });
  t.same(await api.post(`${manager}/deactivateAll`), { success: true });
  t.match(await api.post(hook), { active: false });
  t.same(await api.post(`${hook}/delete`), { success: true });
  t.same(await api.post(manager), []);
  t.match(await api.post(hook), { error: { code: 404 } }, 'a deleted webhook is gone');
});

t.test('a hookUrl that fails the challenge-response check is refused, at create and at edit', async (t) => {
  const emulator = await startEmulator(t);
  const receiver = await startReceiver(t, redis);
  const api = await online(t, emulator);
  const manager = api.webhooks('Parcels');
  const hookUrl = `${receiver.url}/webhooks/default`;
  const params = { name: 'geohook', hookUrl, active: 'true' };

  t.match(await api.post(`${manager}/create`, { ...params, signatureKey: 'not-the-receivers-key' }), {
    error: { code: 400, message: /create/, details: [/wrong response_token/] },
  });
  t.match(await api.post(`${manager}/create`, { ...params, signatureKey: TEST_KEY, hookUrl: `${receiver.url}/webhooks/nope` }), {
    error: { code: 400, details: [/HTTP 404/] },
  });
  t.match(await api.post(`${manager}/create`, { ...params, signatureKey: TEST_KEY, hookUrl: 'http://127.0.0.1:9/webhooks/default' }), {
    error: { code: 400, details: [/did not answer/] },
  });
  t.same(await api.post(manager), [], 'nothing was created');

  const created = (await api.post(`${manager}/create`, { ...params, signatureKey: TEST_KEY })) as Record<string, Json>;
  const hook = `${manager}/${String(created.globalId)}`;
  t.match(await api.post(`${hook}/edit`, { signatureKey: 'another-key' }), { error: { code: 400, details: [/wrong response_token/] } });
  t.match(await api.post(hook), { signatureKey: TEST_KEY }, 'the edit was not applied');
  t.match(
    await api.post(`${hook}/edit`, { name: 'renamed' }),
    { name: 'renamed' },
    'an edit that keeps the URL and key is not checked again',
  );
});

t.test('the organization has the hosted feature services only, by name, and answers errors in the REST shape', async (t) => {
  const emulator = await startEmulator(t);
  const api = await online(t, emulator);
  t.same(await api.post(api.webhooks('Roads')), [], 'Roads is hosted');
  t.match(await api.post(api.webhooks('Zoning')), { error: { code: 404 } }, 'branch-versioned data is not in Online');
  t.match(await api.post(api.webhooks('Buffer')), { error: { code: 404 } }, 'no geoprocessing services');
  t.match(await api.post(`${api.webhooks('Roads')}/create`, { name: 'roads', hookUrl: 'https://example.com/hook' }), {
    error: { code: 400, message: /change tracking/ },
  });
  const updated = await api.post(`${emulator.url}/geohookOrg/ArcGIS/rest/admin/services/Roads/FeatureServer/updateDefinition`, {
    updateDefinition: JSON.stringify({ capabilities: 'Query,Editing,Create,Update,Delete,ChangeTracking' }),
  });
  t.same(updated, { success: true });
});

t.test('webhook settings: Online defaults and bounds, values as strings', async (t) => {
  const emulator = await startEmulator(t);
  const api = await online(t, emulator);
  const settings = `${emulator.url}/geohookOrg/ArcGIS/rest/admin/webhooks/webhookSettings`;
  t.same(await api.post(settings), [{ notificationAttempts: '1', notificationTimeOutInSeconds: '10', numberOfFailures: '5' }]);
  t.same(await api.post(settings, { notificationTimeOutInSeconds: '3', numberOfFailures: '10' }), [
    { notificationAttempts: '1', notificationTimeOutInSeconds: '3', numberOfFailures: '10' },
  ]);
  for (const [name, value] of [
    ['notificationTimeOutInSeconds', '11'],
    ['notificationAttempts', '0'],
    ['numberOfFailures', '11'],
    ['numberOfFailures', '2.5'],
  ] as const) {
    t.match(await api.post(settings, { [name]: value }), { error: { code: 400, message: new RegExp(name) } }, `${name}=${value}`);
  }
  t.match(await api.post(`${emulator.url}/geohookOrg/ArcGIS/rest/admin/webhooks/webhooksettings`), [{ notificationTimeOutInSeconds: '3' }]);
});

t.test('--org-id: the organization is served under its own id', async (t) => {
  const emulator = await startEmulator(t, { orgId: 'myOrg' });
  const token = await emulator.token();
  const list = await fetch(`${emulator.url}/myOrg/ArcGIS/rest/admin/services/Parcels/FeatureServer/WebHooks?f=json&token=${token}`);
  t.same(await list.json(), []);
  const other = await fetch(`${emulator.url}/geohookOrg/ArcGIS/rest/admin/services/Parcels/FeatureServer/WebHooks?f=json&token=${token}`);
  t.match(await other.json(), { status: 'error', code: 404 });
});

t.test('a hosted feature service answers its own REST resource, in the organization and on the server', async (t) => {
  const emulator = await startEmulator(t);
  const token = await emulator.token();
  for (const url of [
    `${emulator.url}/geohookOrg/ArcGIS/rest/services/Parcels/FeatureServer`,
    `${emulator.url}/arcgis/rest/services/Hosted/Parcels/FeatureServer`,
  ]) {
    const answer = await fetch(`${url}?f=json`, { headers: { Authorization: `Bearer ${token}` } });
    t.match(
      await answer.json(),
      { currentVersion: 11.3, syncEnabled: false, capabilities: /ChangeTracking/, layers: [{ id: 0, name: 'Parcels' }] },
      url,
    );
  }
  const missing = await fetch(`${emulator.url}/geohookOrg/ArcGIS/rest/services/Nope/FeatureServer?f=json&token=${token}`);
  t.match(await missing.json(), { error: { code: 404 } });
});
