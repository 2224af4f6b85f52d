import t from 'tap';
import { createAdminClient, type AdminClient } from '../../src/admin/admin-client.js';
import { AdminApiError } from '../../src/errors.js';
import { startEmulator, type TestEmulator } from '../helpers/emulator.js';
import { connectionRefused, jsonAnswer, recordingFetch, rejectionOf, type Step } from './helpers/recording-fetch.js';

const GP = 'Tools/Buffer.GPServer';
const hookUrl = 'http://127.0.0.1:9/h';
const policy = {
  placementPolicy: [{ deploymentId: 'd', deploymentType: 'GPServer', podPlacementPolicy: { nodeAffinity: {}, tolerations: [] } }],
};
const unavailable = (): Response => new Response('<html>busy</html>', { status: 503, statusText: 'Service Unavailable' });

/** A client on the emulator whose fetch follows `script` first; token requests pass straight through. */
async function scripted(emulator: TestEmulator, script: Step[], delaysMs: number[] = [0, 0, 0]) {
  const token = await emulator.token('orgadmin');
  const recorder = recordingFetch(script);
  const client = createAdminClient({ baseUrl: emulator.baseUrl, auth: { token }, fetch: recorder.fetch, retry: { delaysMs } });
  return { client, requests: recorder.requests };
}

t.test('every idempotent read is retried after a 5xx and then succeeds', async (t) => {
  const emulator = await startEmulator(t);
  const setup = createAdminClient({ baseUrl: emulator.baseUrl, auth: { token: await emulator.token('orgadmin') } });
  const { id } = await setup.webhooks.create(GP, { name: 'h', hookUrl });
  const reads: [string, (client: AdminClient) => Promise<unknown>][] = [
    ['list', (c) => c.webhooks.list(GP)],
    ['listAll', (c) => c.webhooks.listAll(GP)],
    ['get', (c) => c.webhooks.get(GP, id)],
    ['notificationStatus', (c) => c.webhooks.notificationStatus(GP, id)],
    ['listOrganization', (c) => c.webhooks.listOrganization()],
    ['settings.get', (c) => c.settings.get()],
    ['placement.get', (c) => c.placement.get(GP)],
    ['findServices', (c) => c.findServices()],
  ];
  for (const [name, read] of reads) {
    const { client, requests } = await scripted(emulator, [unavailable()]);
    await read(client);
    t.equal(requests.length, 2, `${name}: the 503, then the answer`);
  }
});

t.test('a read is retried on network errors along the whole schedule', async (t) => {
  const emulator = await startEmulator(t);
  const { client, requests } = await scripted(emulator, [connectionRefused(), connectionRefused(), connectionRefused()]);
  t.equal((await client.findServices()).length, 6);
  t.equal(requests.length, 4, 'three failures, then success on the last retry');
});

t.test('a read still failing after the schedule throws AdminApiError with the cause', async (t) => {
  const emulator = await startEmulator(t);
  const cause = connectionRefused();
  const { client, requests } = await scripted(emulator, [cause, cause, cause, cause]);
  const err = await rejectionOf(client.findServices());
  t.ok(err instanceof AdminApiError);
  t.match(err, { code: 'GEOHOOK_ERR_ADMIN_API', serverCode: undefined, url: `${emulator.baseUrl}/services/findServices` });
  t.equal((err as Error).cause, cause);
  t.equal((err as Error).message, '/arcgis/admin/services/findServices: request failed: fetch failed (ECONNREFUSED) after 4 attempts');
  t.equal(requests.length, 4);
});

t.test('a read answered 5xx past the schedule throws the last answer', async (t) => {
  const emulator = await startEmulator(t);
  const { client, requests } = await scripted(emulator, [unavailable(), unavailable()], [0]);
  await t.rejects(client.settings.get(), { code: 'GEOHOOK_ERR_ADMIN_API', serverCode: 503, messages: ['HTTP 503 Service Unavailable'] });
  t.equal(requests.length, 2);
});

t.test('an admin error body with code 500 is retried for reads; a 4xx error is not', async (t) => {
  const emulator = await startEmulator(t);
  const internal = jsonAnswer({ status: 'error', messages: ['Internal error.'], code: 500 });
  const first = await scripted(emulator, [internal]);
  await first.client.webhooks.listOrganization();
  t.equal(first.requests.length, 2);
  const second = await scripted(emulator, []);
  await t.rejects(second.client.webhooks.get(GP, 'missing'), { code: 'GEOHOOK_ERR_ADMIN_API', serverCode: 404 });
  t.equal(second.requests.length, 1, '404 is not retried');
});

t.test('the retry schedule is waited between tries', async (t) => {
  const emulator = await startEmulator(t);
  const { client } = await scripted(emulator, [unavailable(), unavailable()], [60, 60]);
  const started = performance.now();
  await client.findServices();
  t.ok(performance.now() - started >= 115, 'two waits of 60 ms');
});

t.test('writes are never retried, on network errors or 5xx', async (t) => {
  const emulator = await startEmulator(t);
  const writes: [string, (client: AdminClient) => Promise<unknown>][] = [
    ['create', (c) => c.webhooks.create(GP, { name: 'w', hookUrl })],
    ['edit', (c) => c.webhooks.edit(GP, 'some-id', { name: 'x' })],
    ['delete', (c) => c.webhooks.delete(GP, 'some-id')],
    ['activateAll', (c) => c.webhooks.activateAll(GP)],
    ['deactivateAll', (c) => c.webhooks.deactivateAll(GP)],
    ['deleteAll', (c) => c.webhooks.deleteAll(GP)],
    ['settings.set', (c) => c.settings.set({ notificationAttempts: 2 })],
    ['placement.edit', (c) => c.placement.edit(GP, policy)],
    ['updateDefinition', (c) => c.updateDefinition('Hosted/Roads.FeatureServer', { syncEnabled: false })],
  ];
  for (const [name, write] of writes) {
    for (const failure of [connectionRefused(), unavailable()]) {
      const { client, requests } = await scripted(emulator, [failure]);
      await t.rejects(write(client), AdminApiError, name);
      t.equal(requests.length, 1, `${name}: sent once`);
    }
  }
  const check = createAdminClient({ baseUrl: emulator.baseUrl, auth: { token: await emulator.token('admin') } });
  t.same(await check.webhooks.listAll(GP), [], 'nothing was created behind the failure');
});
