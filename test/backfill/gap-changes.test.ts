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
  // The status and result URLs come from the trusted service's answer; the service URL from the configuration.
  const elsewhere = await server(t, (path) =>
    path.endsWith('/status')
      ? { status: 'Completed', resultUrl: `${elsewhereOrigin()}/result` }
      : { edits: [{ id: 0, objectIds: { adds: [1], updates: [], deletes: [] } }] },
  );
  const elsewhereOrigin = (): string => elsewhere.origin;
  const service = await server(t, (path) =>
    path.endsWith('/extractChanges')
      ? { statusUrl: `${elsewhere.origin}/status` }
      : { layers: [{ id: 0 }], extractChangesCapabilities: { supportsReturnIdsOnly: true } },
  );
  const serviceUrl = new URL(`${service.origin}/arcgis/rest/services/Hosted/Parcels/FeatureServer`);
  const session = createServiceSession({ trusted: trustedUrls([service.origin]), auth: { token: 'the-admin-token' }, pollIntervalMs: 10 });
  const { types } = await readGapChanges(session, { serviceUrl, from: '1', to: '5', layerId: undefined });
  t.strictSame(types, ['FeaturesCreated']);
  t.ok(service.seen.length >= 2 && service.seen.every(({ token }) => token === 'the-admin-token'), 'the configured service gets the token');
  t.strictSame(
    elsewhere.seen.map(({ path, token }) => [path, token]),
    [
      ['/status', null],
      ['/result', null],
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
