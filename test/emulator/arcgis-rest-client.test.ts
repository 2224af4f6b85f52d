import { updateServiceDefinition } from '@esri/arcgis-rest-feature-service';
import { ApiKeyManager, ArcGISRequestError, request, type ArcGISIdentityManager } from '@esri/arcgis-rest-request';
import t from 'tap';
import { startEmulator } from '../helpers/emulator.js';

// The vendor's own JavaScript client: if it reads the emulator's answers as the real product's, the wire
// format (form-encoded POSTs, `f=json`, errors inside HTTP 200) is what real clients expect.

t.test('@esri/arcgis-rest-request obtains a token and creates a webhook', async (t) => {
  const emulator = await startEmulator(t);
  const { token } = (await request(`${emulator.url}/arcgis/sharing/rest/generateToken`, {
    params: { username: 'admin', password: 'admin.pass', expiration: 60 },
  })) as { token: string };
  t.type(token, 'string');
  const created = await request(`${emulator.baseUrl}/services/Tools/Buffer.GPServer/webhooks/create`, {
    params: { token, name: 'from-arcgis-rest-js', hookUrl: 'https://example.com/hook', active: true },
  });
  t.match(created, { status: 'success', name: 'from-arcgis-rest-js', active: true, serviceName: 'Buffer' });
});

t.test('@esri/arcgis-rest-request changes the webhook settings as an organisation administrator', async (t) => {
  const emulator = await startEmulator(t);
  const token = await emulator.token('orgadmin');
  const settings = await request(`${emulator.baseUrl}/services/webhooks/settings`, {
    params: { token, notificationAttempts: 4, notificationTimeOutInSeconds: 30 },
  });
  t.match(settings, { status: 'success', notificationAttempts: 4, notificationTimeOutInSeconds: 30 });
});

t.test('@esri/arcgis-rest-request rejects an admin error answered with HTTP 200', async (t) => {
  const emulator = await startEmulator(t);
  const token = await emulator.token('viewer');
  const error = await request(`${emulator.baseUrl}/services/webhooks/settings`, { params: { token, notificationAttempts: 4 } }).then(
    () => undefined,
    (err: unknown) => err,
  );
  t.ok(error instanceof ArcGISRequestError, 'an ArcGISRequestError');
  t.equal((error as ArcGISRequestError).code, 403);
  t.match((error as ArcGISRequestError).response, { status: 'error', code: 403, messages: [/not authorized/] });
});

t.test('@esri/arcgis-rest-feature-service updates a hosted service definition at rest/admin, as it does on the product', async (t) => {
  const emulator = await startEmulator(t);
  const token = await emulator.token();
  const serviceUrl = `${emulator.url}/arcgis/rest/services/Hosted/Roads/FeatureServer`;
  const refused = await emulator.admin('services/Hosted/Roads.FeatureServer/webhooks/create', {
    name: 'roads',
    hookUrl: 'https://example.com/hook',
  });
  t.match(refused, { status: 'error', messages: [/change tracking/] }, 'Roads has no change tracking to begin with');
  const answer = await updateServiceDefinition(serviceUrl, {
    // The option's type names a portal session; any authentication manager adds its token the same way, and
    // the emulator has no portal to sign in to.
    authentication: ApiKeyManager.fromKey(token) as unknown as ArcGISIdentityManager,
    updateDefinition: { capabilities: 'Query,Editing,Create,Update,Delete,ChangeTracking' },
  });
  t.same(answer, { success: true });
  const created = await emulator.admin('services/Hosted/Roads.FeatureServer/webhooks/create', {
    name: 'roads',
    hookUrl: 'https://example.com/hook',
  });
  t.match(created, { status: 'success', serviceName: 'Roads' }, 'the new definition takes webhooks');
});
