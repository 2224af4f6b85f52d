import t from 'tap';
import { adminAuthFor } from '../../src/arcgis/online-admin.js';
import { createTokenProvider, renewalMarginMs } from '../../src/arcgis-request/token-provider.js';
import { jsonAnswer, recordingFetch } from '../admin/helpers/recording-fetch.js';

const base = { timeoutMs: 1000 };
const TOKEN_URL = 'http://gis.example/arcgis/admin/generateToken';

/** A token endpoint that issues t1, t2, … valid for `lifetimeMs` of the fake clock. */
function tokenServer(clock: { now: number }, lifetimeMs: number) {
  let issued = 0;
  const calls: string[] = [];
  const fetchFn: typeof fetch = async (input) => {
    calls.push(String(input));
    issued += 1;
    return jsonAnswer({ token: `t${issued}`, expires: clock.now + lifetimeMs, ssl: false });
  };
  return { fetch: fetchFn, calls };
}

t.test('the renewal margin is a minute, or a tenth of a shorter lifetime', async (t) => {
  t.equal(renewalMarginMs(60 * 60_000), 60_000);
  t.equal(renewalMarginMs(100_000), 10_000);
  t.equal(renewalMarginMs(-5), 0);
});

t.test('a token is cached and renewed a minute before it expires', async (t) => {
  const clock = { now: 1_000_000 };
  const server = tokenServer(clock, 60 * 60_000);
  const provider = createTokenProvider({
    ...base,
    auth: { username: 'u', password: 'p', tokenUrl: TOKEN_URL },
    fetch: server.fetch,
    now: () => clock.now,
  });
  t.equal(await provider.token(), 't1');
  t.same(server.calls, [TOKEN_URL]);
  clock.now += 59 * 60_000 - 1;
  t.equal(await provider.token(), 't1', 'still cached just before the margin');
  clock.now += 1;
  t.equal(await provider.token(), 't2', 'renewed a minute before expiry');
  t.equal(server.calls.length, 2);
});

t.test('a short-lived token is renewed a tenth of its lifetime before it expires', async (t) => {
  const clock = { now: 0 };
  const server = tokenServer(clock, 100_000);
  const provider = createTokenProvider({
    ...base,
    auth: { username: 'u', password: 'p', tokenUrl: 'http://portal/sharing/rest/generateToken' },
    fetch: server.fetch,
    now: () => clock.now,
  });
  await provider.token();
  clock.now = 89_999;
  t.equal(await provider.token(), 't1');
  clock.now = 90_000;
  t.equal(await provider.token(), 't2');
  t.equal(server.calls[0], 'http://portal/sharing/rest/generateToken');
});

t.test('renew replaces the rejected token once, however many callers report it', async (t) => {
  const clock = { now: 0 };
  const server = tokenServer(clock, 60 * 60_000);
  const provider = createTokenProvider({
    ...base,
    auth: { username: 'u', password: 'p', tokenUrl: TOKEN_URL },
    fetch: server.fetch,
    now: () => clock.now,
  });
  const rejected = await provider.token();
  const renewed = await Promise.all([provider.renew(rejected), provider.renew(rejected), provider.renew(rejected)]);
  t.same(renewed, ['t2', 't2', 't2']);
  t.equal(await provider.renew(rejected), 't2', 'a late report of the old token keeps the new one');
  t.equal(server.calls.length, 2);
});

t.test('concurrent callers share one token request', async (t) => {
  const clock = { now: 0 };
  const server = tokenServer(clock, 60 * 60_000);
  const provider = createTokenProvider({
    ...base,
    auth: { username: 'u', password: 'p', tokenUrl: TOKEN_URL },
    fetch: server.fetch,
    now: () => clock.now,
  });
  t.same(await Promise.all([provider.token(), provider.token(), provider.token()]), ['t1', 't1', 't1']);
  t.equal(server.calls.length, 1);
});

t.test('a failed token request is not cached: the next caller asks again', async (t) => {
  const recorder = recordingFetch([
    jsonAnswer({ error: { code: 400, message: 'Unable to generate token.', details: [] } }),
    jsonAnswer({ token: 'ok', expires: Date.now() + 3_600_000 }),
  ]);
  const provider = createTokenProvider({ ...base, auth: { username: 'u', password: 'p', tokenUrl: TOKEN_URL }, fetch: recorder.fetch });
  await t.rejects(provider.token(), { code: 'GEOHOOK_ERR_ADMIN_API', serverCode: 400 });
  t.equal(await provider.token(), 'ok');
});

t.test('a token whose expiry is behind our clock lives for the lifetime asked for', async (t) => {
  const clock = { now: 10_000_000 };
  const server = tokenServer(clock, -5_000_000);
  const provider = createTokenProvider({
    ...base,
    auth: { username: 'u', password: 'p', tokenUrl: TOKEN_URL, expirationMinutes: 10 },
    fetch: server.fetch,
    now: () => clock.now,
  });
  await provider.token();
  clock.now += 9 * 60_000 - 1;
  t.equal(await provider.token(), 't1');
  t.equal(server.calls.length, 1);
});

t.test('a static token is handed out as it is and is not renewable', async (t) => {
  const provider = createTokenProvider({
    ...base,
    auth: { token: 'static' },
    fetch: async () => {
      throw new Error('no request');
    },
  });
  t.equal(provider.renewable, false);
  t.equal(await provider.token(), 'static');
  t.equal(await provider.renew('static'), 'static');
  const none = createTokenProvider({ ...base, auth: undefined, fetch: globalThis.fetch });
  t.equal(await none.token(), undefined);
});

t.test('credentials take their token URL from the admin root they are for, unless they name one', async (t) => {
  const user = { username: 'u', password: 'p' };
  t.same(adminAuthFor('http://gis.example/arcgis/admin/', user), { ...user, tokenUrl: TOKEN_URL }, 'ArcGIS Enterprise');
  t.same(
    adminAuthFor('https://services.arcgis.com/org1/ArcGIS/rest/admin', user),
    { ...user, tokenUrl: 'https://services.arcgis.com/sharing/rest/generateToken' },
    "an ArcGIS Online organization's portal",
  );
  const named = { ...user, tokenUrl: 'https://portal.example/sharing/rest/generateToken' };
  t.equal(adminAuthFor('http://gis.example/arcgis/admin', named), named, 'TOKEN_URL as it is');
  t.same(adminAuthFor('http://gis.example/arcgis/admin', { token: 'x' }), { token: 'x' });
});
