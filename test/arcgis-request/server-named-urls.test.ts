import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { trustedUrls } from '../../src/arcgis/trusted-urls.js';
import { openChanges, readChanges } from '../../src/arcgis-request/extract-changes.js';
import { createServiceSession } from '../../src/arcgis-request/service-session.js';

const SECRET = 'db_password=hunter2';

/** A loopback server answering `route(path, origin)` (status 200 unless given), recording each path it was asked. */
async function serve(
  t: Test,
  route: (path: string, origin: string) => { status?: number; location?: string; body: unknown },
): Promise<{ origin: string; hits: string[] }> {
  const hits: string[] = [];
  let origin = '';
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const path = new URL(request.url ?? '/', origin).pathname;
      hits.push(path);
      const answer = route(path, origin);
      response.writeHead(answer.status ?? 200, {
        'content-type': 'application/json',
        ...(answer.location === undefined ? {} : { location: answer.location }),
      });
      response.end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { origin, hits };
}

/** An "internal-only" service: whatever it is asked, an error that holds a secret. */
const internalService = (t: Test) => serve(t, () => ({ status: 500, body: { error: { code: 500, message: `INTERNAL: ${SECRET}` } } }));

/** A session trusting the fake GIS origin's REST services, with a token; it polls fast. */
const sessionAt = (gis: string) =>
  createServiceSession({ trusted: trustedUrls([`${gis}/arcgis/rest/services/`]), auth: { token: 'the-admin-token' }, pollIntervalMs: 5 });

const extractUrl = (gis: string): URL => new URL(`${gis}/arcgis/rest/services/Hosted/Fake/FeatureServer/extractChanges?serverGens=[10,20]`);

t.test(
  'issue 51 (N7): a statusUrl a trusted answer names on another host is refused, with nothing requested and no secret told',
  async (t) => {
    const internal = await internalService(t);
    const gis = await serve(t, () => ({ body: { statusUrl: `${internal.origin}/latest/meta-data/iam/security-credentials/` } }));
    const refused = readChanges(sessionAt(gis.origin), extractUrl(gis.origin));
    await t.rejects(refused, {
      code: 'GEOHOOK_ERR_UNTRUSTED_URL',
      message: `${internal.origin}/latest/meta-data/iam/security-credentials/, named by an answer of ${gis.origin}, is neither on that origin nor on signed storage (https://*.arcgis.com): no request was sent`,
    });
    t.strictSame(internal.hits, [], 'the other server got no request');
    const message = await refused.catch((err: Error) => `${err.message} ${JSON.stringify(err)}`);
    t.notMatch(message, /hunter2/, 'no secret of the other server in the error');
  },
);

t.test('issue 51 (N7): a resultUrl on another host, or a redirect of the result to one, is refused unsent', async (t) => {
  const internal = await internalService(t);
  const results: Record<string, string> = {};
  const gis = await serve(t, (path, origin) => {
    if (path.endsWith('/extractChanges')) return { body: { statusUrl: `${origin}/arcgis/rest/services/Hosted/Fake/FeatureServer/jobs/1` } };
    if (path.endsWith('/jobs/1')) return { body: { status: 'Completed', resultUrl: results.next } };
    return { status: 302, location: `${internal.origin}/admin/secrets`, body: {} };
  });
  const session = sessionAt(gis.origin);
  results.next = `${internal.origin}/result.json`;
  await t.rejects(readChanges(session, extractUrl(gis.origin)), {
    code: 'GEOHOOK_ERR_UNTRUSTED_URL',
    message: /^http:\/\/127\.0\.0\.1:\d+\/result\.json, named by/,
  });
  results.next = `${gis.origin}/replicafiles/1.json`;
  await t.rejects(readChanges(session, extractUrl(gis.origin)), {
    code: 'GEOHOOK_ERR_UNTRUSTED_URL',
    message: /\/admin\/secrets, named by/,
  });
  await t.rejects(openChanges(session, extractUrl(gis.origin), { dir: t.testdir() }), {
    code: 'GEOHOOK_ERR_UNTRUSTED_URL',
    message: /\/admin\/secrets, named by/,
  });
  t.strictSame(internal.hits, [], 'the other server got no request');
  t.ok(
    gis.hits.filter((path) => path === '/replicafiles/1.json').length === 2,
    'the result on the GIS origin was asked, without following its redirect',
  );
});

t.test(
  "issue 51 (N7): the answer of a named URL outside the trusted ones stays out of the error, the trusted server's does not",
  async (t) => {
    const gis = await serve(t, (path, origin) => {
      if (path.endsWith('/extractChanges')) return { body: { statusUrl: `${origin}/jobs/1` } };
      if (path === '/jobs/1') return { status: 500, body: { error: { code: 500, message: `INTERNAL: ${SECRET}` } } };
      return { status: 400, body: { error: { code: 400, message: 'Invalid serverGens.' } } };
    });
    const named = await readChanges(sessionAt(gis.origin), extractUrl(gis.origin)).catch((err: Error & { response?: unknown }) => err);
    t.match(named, { code: 'GEOHOOK_ERR_ADMIN_API', message: /HTTP 500: the answer of a URL geohook does not trust is not repeated/ });
    t.notMatch(`${(named as Error).message} ${JSON.stringify(named)}`, /hunter2/);
    const trusted = new URL(`${gis.origin}/arcgis/rest/services/Hosted/Fake/FeatureServer/query`);
    await t.rejects(sessionAt(gis.origin).read(trusted), { message: /Invalid serverGens\./ }, 'a trusted answer is repeated');
  },
);
