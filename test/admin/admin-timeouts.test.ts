import t, { type Test } from 'tap';
import { createAdminClient } from '../../src/admin/admin-client.js';
import { AdminApiError } from '../../src/errors.js';
import { recordingFetch, rejectionOf } from './helpers/recording-fetch.js';

const GP = 'Tools/Buffer.GPServer';

/**
 * AbortSignal.timeout's timer does not hold the event loop open (a real fetch's socket would): while a scripted
 * fetch hangs, something must, or the test process ends first.
 */
function holdEventLoop(t: Test): void {
  const timer = setInterval(() => undefined, 1000);
  t.teardown(() => clearInterval(timer));
}

t.test('a fetch that never answers times out after timeoutMs', async (t) => {
  holdEventLoop(t);
  const recorder = recordingFetch(['hang', 'hang', 'hang']);
  const client = createAdminClient({
    baseUrl: 'http://127.0.0.1:9/arcgis/admin',
    auth: { token: 't' },
    fetch: recorder.fetch,
    timeoutMs: 50,
    retry: { delaysMs: [0, 0] },
  });
  const err = await rejectionOf(client.findServices());
  t.ok(err instanceof AdminApiError);
  t.equal((err as Error).message, '/arcgis/admin/services/findServices: request failed: no answer within 50 ms after 3 attempts');
  t.equal(((err as Error).cause as Error).name, 'TimeoutError');
  t.equal(recorder.requests.length, 3, 'a read: tried along the schedule');
  const write = recordingFetch(['hang', 'hang']);
  const writer = createAdminClient({ baseUrl: 'http://127.0.0.1:9/arcgis/admin', auth: { token: 't' }, fetch: write.fetch, timeoutMs: 50 });
  await t.rejects(writer.webhooks.deleteAll(GP), { message: /no answer within 50 ms$/ });
  t.equal(write.requests.length, 1, 'a write: once');
});

t.test('a body that never ends times out too', async (t) => {
  holdEventLoop(t);
  const endless = new Response(
    new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"webh'));
      },
    }),
    { status: 200 },
  );
  const recorder = recordingFetch([endless]);
  const client = createAdminClient({
    baseUrl: 'http://127.0.0.1:9/arcgis/admin',
    fetch: recorder.fetch,
    timeoutMs: 50,
    retry: { delaysMs: [] },
  });
  await t.rejects(client.webhooks.listOrganization(), { code: 'GEOHOOK_ERR_ADMIN_API', message: /no answer within 50 ms/ });
});

t.test('generateToken times out after timeoutMs too', async (t) => {
  holdEventLoop(t);
  const recorder = recordingFetch(['hang']);
  const client = createAdminClient({
    baseUrl: 'http://127.0.0.1:9/arcgis/admin',
    auth: { username: 'u', password: 'p' },
    fetch: recorder.fetch,
    timeoutMs: 50,
  });
  await t.rejects(client.findServices(), { message: '/arcgis/admin/generateToken: request failed: no answer within 50 ms' });
});
