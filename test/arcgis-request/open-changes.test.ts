import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { trustedUrls } from '../../src/arcgis/trusted-urls.js';
import { openChanges } from '../../src/arcgis-request/extract-changes.js';
import { createServiceSession } from '../../src/arcgis-request/service-session.js';
import { AdminApiError } from '../../src/errors.js';

interface Seen {
  method: string;
  path: string;
  token: string | undefined;
}

const bodyOf = (request: IncomingMessage): Promise<string> =>
  new Promise((resolve) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString()));
    request.on('end', () => resolve(text));
  });

/** A loopback server answering `route(path, token)` with JSON (or a redirect), recording each request and its token. */
async function serve(
  t: Test,
  route: (path: string, token: string | undefined) => { status?: number; location?: string; body?: string },
): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server: Server = createServer((request, response) => {
    void bodyOf(request).then((body) => {
      const url = new URL(request.url ?? '/', 'http://x');
      const token = new URLSearchParams(body).get('token') ?? url.searchParams.get('token') ?? undefined;
      seen.push({ method: request.method ?? '', path: url.pathname, token });
      const answer = route(url.pathname, token);
      response.writeHead(answer.status ?? 200, {
        'content-type': 'application/json',
        ...(answer.location === undefined ? {} : { location: answer.location }),
      });
      response.end(answer.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const FILE = JSON.stringify({
  layerServerGens: [{ id: 0, serverGen: 9 }],
  edits: [{ id: 0, features: { adds: [{ attributes: { objectid: 1, big: 0 } }], updates: [], deleteIds: [4] } }],
}).replace('"big":0', '"big":9007199254740993');

/** The GIS server: tokens t1, t2…; `extractChanges` answers a job whose result is `resultUrl(gis)`; `storage` is the session's signed storage. */
async function gisServer(t: Test, resultUrl: (gis: string) => string, result?: (token: string | undefined) => string, storage?: string[]) {
  let issued = 0;
  let gis = '';
  const server = await serve(t, (path, token) => {
    if (path.endsWith('/generateToken')) {
      issued += 1;
      return { body: JSON.stringify({ token: `t${issued}`, expires: Date.now() + 3_600_000 }) };
    }
    if (path.endsWith('/extractChanges')) return { body: JSON.stringify({ statusUrl: `${gis}/jobs/1` }) };
    if (path === '/jobs/1') return { body: JSON.stringify({ status: 'Completed', resultUrl: resultUrl(gis) }) };
    if (path === '/results/1' && result !== undefined) return { body: result(token) };
    return { status: 404, body: '{}' };
  });
  gis = server.url;
  const session = createServiceSession({
    trusted: trustedUrls([`${gis}/arcgis`]),
    auth: { username: 'u', password: 'p', tokenUrl: `${gis}/arcgis/sharing/rest/generateToken` },
    pollIntervalMs: 10,
    ...(storage === undefined ? {} : { storage }),
  });
  // The jobs and results are on the GIS server's origin but outside the trusted path: named by a trusted answer.
  return { ...server, session, extract: new URL(`${gis}/arcgis/rest/services/S/FeatureServer/extractChanges?serverGens=[1,9]`) };
}

t.test('a result on signed storage is read with GET and no token; a redirect from it is followed without one', async (t) => {
  const storage = await serve(t, (path) =>
    path === '/signed/1' ? { status: 302, location: '/blob/1' } : path === '/blob/1' ? { body: FILE } : { status: 404, body: '{}' },
  );
  const gis = await gisServer(t, () => `${storage.url}/signed/1`, undefined, [storage.url]);
  const file = await openChanges(gis.session, gis.extract, { dir: t.testdir() });
  t.teardown(() => file.close());
  t.strictSame(
    storage.seen.map(({ method, path, token }) => [method, path, token]),
    [
      ['GET', '/signed/1', undefined],
      ['GET', '/blob/1', undefined],
    ],
  );
  t.equal(gis.seen.find(({ path }) => path.endsWith('/extractChanges'))?.token, 't1', 'the trusted server is sent the token');
  t.strictSame(await file.read(0, 0, 1), [{ attributes: { objectid: 1, big: '9007199254740993' } }], 'read exactly, from disk');
  t.strictSame(await file.read(2, 0, 1), [4], 'the deleted ids (list 1 is the empty updates)');
  t.strictSame(file.root, { layerServerGens: [{ id: 0, serverGen: 9 }] });
});

t.test('a trusted result that refuses the token inside an HTTP 200 gets one renewal, then the file', async (t) => {
  // The result lies under the trusted URL: it is POSTed the token, as the service is.
  const trustedResult = await gisServer(
    t,
    (root) => `${root}/results/1`,
    (token) => (token === 't1' ? JSON.stringify({ error: { code: 498, message: 'Invalid token.' } }) : FILE),
  );
  const session = createServiceSession({
    trusted: trustedUrls([trustedResult.url]),
    auth: { username: 'u', password: 'p', tokenUrl: `${trustedResult.url}/generateToken` },
    pollIntervalMs: 10,
  });
  const file = await openChanges(session, new URL(`${trustedResult.url}/S/FeatureServer/extractChanges`), { dir: t.testdir() });
  t.teardown(() => file.close());
  t.strictSame(
    trustedResult.seen.filter(({ path }) => path === '/results/1').map(({ method, token }) => [method, token]),
    [
      ['POST', 't1'],
      ['POST', 't2'],
    ],
    'refused once, renewed once',
  );
  t.equal(file.lists[0]?.length, 1);
});

t.test('an error inside the result, or a result without edits, fails the read and leaves no file behind', async (t) => {
  const dir = t.testdir();
  const failing = await gisServer(
    t,
    (root) => `${root}/results/1`,
    () => JSON.stringify({ error: { code: 400, message: 'Invalid range' } }),
  );
  const session = createServiceSession({ trusted: trustedUrls([failing.url]), pollIntervalMs: 10 });
  await t.rejects(openChanges(session, new URL(`${failing.url}/S/FeatureServer/extractChanges`), { dir }), AdminApiError);
  const empty = await gisServer(
    t,
    (root) => `${root}/results/1`,
    () => '{"layerServerGens":[]}',
  );
  const emptySession = createServiceSession({ trusted: trustedUrls([empty.url]), pollIntervalMs: 10 });
  await t.rejects(openChanges(emptySession, new URL(`${empty.url}/S/FeatureServer/extractChanges`), { dir }), {
    message: /'edits' array/,
  });
  const { readdirSync } = await import('node:fs');
  t.strictSame(readdirSync(dir), [], 'no file left');
});
