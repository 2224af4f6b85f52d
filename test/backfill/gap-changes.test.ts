import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { trustedUrls } from '../../src/arcgis/trusted-urls.js';
import { createServiceSession } from '../../src/arcgis-request/service-session.js';
import { readGapChanges } from '../../src/backfill/gap-changes.js';

/** A loopback server answering `answer(path)` as JSON and recording each request's path and form token. */
async function server(
  t: Test,
  answer: (path: string, origin: string) => unknown,
): Promise<{ origin: string; seen: { path: string; token: string | null }[] }> {
  const seen: { path: string; token: string | null }[] = [];
  let origin = '';
  const http: Server = createServer((request: IncomingMessage, reply) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const path = new URL(request.url!, origin).pathname;
      const token = new URLSearchParams(body).get('token') ?? new URL(request.url!, origin).searchParams.get('token');
      seen.push({ path, token });
      reply.setHeader('content-type', 'application/json');
      reply.end(JSON.stringify(answer(path, origin)));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  t.teardown(() => new Promise<void>((resolve) => http.close(() => resolve())));
  return { origin, seen };
}

t.test("a gap's asynchronous job is polled where the configured service's answer says, and only the service gets the token", async (t) => {
  // The status and result URLs come from the trusted service's answer, on its origin outside the trusted path.
  const service = await server(t, (path, origin) =>
    path.endsWith('/extractChanges')
      ? { statusUrl: `${origin}/jobs/status` }
      : path === '/jobs/status'
        ? { status: 'Completed', resultUrl: `${origin}/jobs/result` }
        : path === '/jobs/result'
          ? { edits: [{ id: 0, objectIds: { adds: [1], updates: [], deletes: [] } }] }
          : { layers: [{ id: 0 }], extractChangesCapabilities: { supportsReturnIdsOnly: true } },
  );
  const serviceUrl = new URL(`${service.origin}/arcgis/rest/services/Hosted/Parcels/FeatureServer`);
  const trusted = trustedUrls([`${service.origin}/arcgis/rest/services/`]);
  const session = createServiceSession({ trusted, auth: { token: 'the-admin-token' }, pollIntervalMs: 10 });
  const { types } = await readGapChanges(session, { serviceUrl, from: '1', to: '5', layerId: undefined });
  t.strictSame(types, ['FeaturesCreated']);
  const services = service.seen.filter(({ path }) => path.startsWith('/arcgis/'));
  t.ok(services.length >= 2 && services.every(({ token }) => token === 'the-admin-token'), 'the configured service gets the token');
  t.strictSame(
    service.seen.filter(({ path }) => path.startsWith('/jobs/')).map(({ path, token }) => [path, token]),
    [
      ['/jobs/status', null],
      ['/jobs/result', null],
    ],
    'the status and result URLs its answer named are read without it',
  );
});

t.test('a gap read refuses a service URL the configuration does not trust, and sends it nothing', async (t) => {
  const stranger = await server(t, () => ({ layers: [] }));
  const session = createServiceSession({ trusted: trustedUrls(['http://gis.example.com']), auth: { token: 'the-admin-token' } });
  const serviceUrl = new URL(`${stranger.origin}/arcgis/rest/services/X/FeatureServer`);
  await t.rejects(readGapChanges(session, { serviceUrl, from: '1', to: '2', layerId: undefined }), { code: 'GEOHOOK_ERR_UNTRUSTED_URL' });
  t.equal(stranger.seen.length, 0);
});
