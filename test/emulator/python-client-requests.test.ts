import t, { type Test } from 'tap';
import { startEmulator, type TestEmulator } from '../helpers/emulator.js';
import type { Json } from '../helpers/json.js';

// The requests the ArcGIS API for Python 2.x sends to ArcGIS Enterprise (arcgis.gis.server's ServiceWebHookManager
// and ServiceWebHook), reproduced here in TypeScript: the same requests, encoded as its `requests` session encodes
// them. No Python runs: what these tests show holds as far as the reproduction is faithful.

/** Python's `urllib.parse.quote_plus`: only letters, digits and `_.-~` stay; a space becomes `+`. */
function quotePlus(text: string): string {
  return encodeURIComponent(text)
    .replace(/[!'()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`)
    .replaceAll('%20', '+');
}

/** `json.dumps` with Python's default separators, `", "` and `": "`. */
function pythonJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pythonJson).join(', ')}]`;
  if (typeof value === 'object' && value !== null) {
    return `{${Object.entries(value)
      .map(([key, item]) => `${JSON.stringify(key)}: ${pythonJson(item)}`)
      .join(', ')}}`;
  }
  return JSON.stringify(value);
}

/** `Connection._process_params`: `f=json` always, `None` dropped, bools, dicts and lists as JSON. */
function encodeParams(params: Record<string, unknown>): string {
  return Object.entries({ ...params, f: 'json' })
    .filter(([, value]) => value !== null && value !== undefined)
    .map(
      ([key, value]) =>
        `${quotePlus(key)}=${quotePlus(typeof value === 'string' ? value : typeof value === 'number' ? String(value) : pythonJson(value))}`,
    )
    .join('&');
}

/** `arcgis.gis._impl._con.Connection` after sign-in: the token only in `X-Esri-Authorization`, never a `token` field. */
interface PythonConnection {
  get(url: string, params?: Record<string, unknown>): Promise<Record<string, Json>>;
  post(url: string, params?: Record<string, unknown>): Promise<Record<string, Json>>;
}

async function signIn(t: Test, emulator: TestEmulator): Promise<PythonConnection> {
  // EsriGenTokenAuth: the token service comes from an info resource, asked without a token.
  const info = (await (await fetch(`${emulator.url}/arcgis/info?f=json`)).json()) as { authInfo: { tokenServicesUrl: string } };
  const generated = await fetch(info.authInfo.tokenServicesUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: encodeParams({ username: 'admin', password: 'admin.pass', referer: 'http', client: 'referer', expiration: 60 }),
  });
  const { token, expires } = (await generated.json()) as { token: string; expires: number };
  t.ok(expires > Date.now(), '`expires` in milliseconds, as the client reads it');
  const headers = { 'X-Esri-Authorization': `Bearer ${token}`, referer: 'http', 'User-Agent': 'Geosaurus/2.1.0' };
  const parse = async (response: Response): Promise<Record<string, Json>> => {
    t.match(response.headers.get('content-type'), /json/, 'a JSON content type, or the client saves the body to a file');
    return (await response.json()) as Record<string, Json>;
  };
  return {
    get: async (url, params = {}) => parse(await fetch(`${url}?${encodeParams(params)}`, { headers })),
    post: async (url, params = {}) =>
      parse(
        await fetch(url, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
          body: encodeParams(params),
        }),
      ),
  };
}

/** `ServiceWebHookManager.create`'s default `scheduleInfo`. */
const defaultSchedule = (now: number): Json => ({
  name: '',
  state: 'enabled',
  startAt: now,
  recurrenceInfo: { interval: 20, frequency: 'second' },
});

/** `ServiceWebHook.edit`: the webhook as read, overlaid with the changed fields, posted back whole. */
async function edit(con: PythonConnection, hookUrl: string, changes: Record<string, unknown>): Promise<Record<string, Json>> {
  const properties = await con.get(hookUrl);
  const params = { changeTypes: (properties.changeTypes as string[]).join(','), ...changes };
  return con.post(`${hookUrl}/edit`, { ...properties, ...params });
}

t.test(
  "the ArcGIS API for Python's requests, reproduced, manage a feature service webhook, from create to delete, with the token only in a header",
  async (t) => {
    const emulator = await startEmulator(t);
    const con = await signIn(t, emulator);
    const root = `${emulator.url}/arcgis/admin`;

    // BaseServer._server_version: webhook_manager exists only from 11.0.
    const version = String((await con.get(root)).currentVersion)
      .split('.')
      .map(Number);
    t.ok(version[0]! >= 11, `currentVersion ${version.join('.')} is 11 or later`);

    // ServiceManager.list: the root lists folders, a folder lists its services, a service answers its properties.
    t.ok(((await con.get(`${root}/services`)).folders as string[]).includes('Hosted'));
    t.match((await con.get(`${root}/services/Hosted`)).services, [{ serviceName: 'Parcels', type: 'FeatureServer' }]);
    const serviceUrl = `${root}/services/Hosted/Parcels.FeatureServer`;
    t.match(await con.get(serviceUrl), { serviceName: 'Parcels', type: 'FeatureServer' });

    const manager = `${serviceUrl}/webhooks`;
    const startAt = Date.now();
    const created = await con.post(`${manager}/create`, {
      name: 'geohook',
      changeTypes: '*',
      signatureKey: 'geohook-key',
      hookUrl: 'https://receiver.example/webhooks/default',
      active: true,
      scheduleInfo: defaultSchedule(startAt),
      payloadFormat: 'json',
    });
    t.not(created.status, 'error', JSON.stringify(created));
    const id = String(created.id ?? created.globalId);
    const hookUrl = `${manager}/${id}`;

    // The list property pages with start/num until nextStart is -1.
    const listed = await con.get(manager, { start: 1, num: 25 });
    t.same(
      (listed.webhooks as Array<{ id: string }>).map((hook) => hook.id),
      [id],
    );
    t.equal(listed.nextStart, -1);

    const read = await con.get(hookUrl);
    t.match(read, {
      id,
      name: 'geohook',
      changeTypes: ['*'],
      active: true,
      signatureKey: 'geohook-key',
      scheduleInfo: defaultSchedule(startAt),
    });

    // WebHookScheduleInfo.as_dict() leaves `state` out and carries its own frequency; the client also sends
    // `content_type`, a field the server does not know.
    const edited = await edit(con, hookUrl, {
      name: 'geohook-renamed',
      changeTypes: 'FeaturesCreated,FeaturesUpdated',
      active: false,
      scheduleInfo: { name: 'every five minutes', startAt, recurrenceInfo: { frequency: 'minute', interval: 5 } },
      content_type: 'application/json',
    });
    t.equal(edited.status, 'success', JSON.stringify(edited));
    t.match(await con.get(hookUrl), {
      id,
      name: 'geohook-renamed',
      changeTypes: ['FeaturesCreated', 'FeaturesUpdated'],
      active: false,
      signatureKey: 'geohook-key',
      hookUrl: 'https://receiver.example/webhooks/default',
      scheduleInfo: { name: 'every five minutes', state: 'enabled', startAt, recurrenceInfo: { frequency: 'minute', interval: 5 } },
      created: read.created,
      ownerId: 'admin',
    });

    // enable_hooks / disable_hooks / delete_all_hooks read `status == "success"`.
    t.equal((await con.post(`${manager}/activateAll`)).status, 'success');
    t.equal((await con.get(hookUrl)).active, true);
    t.equal((await con.post(`${manager}/deactivateAll`)).status, 'success');
    t.equal((await con.get(hookUrl)).active, false);
    t.equal((await con.post(`${hookUrl}/delete`)).status, 'success');
    t.same((await con.get(manager, { start: 1, num: 25 })).webhooks, []);
  },
);

t.test(
  "the ArcGIS API for Python's requests, reproduced, create and edit a geoprocessing webhook with its feature-service defaults",
  async (t) => {
    const emulator = await startEmulator(t);
    const con = await signIn(t, emulator);
    const manager = `${emulator.url}/arcgis/admin/services/Tools/Buffer.GPServer/webhooks`;
    const created = await con.post(`${manager}/create`, {
      name: 'gp',
      changeTypes: '*',
      hookUrl: 'https://receiver.example/webhooks/default',
      active: false,
      scheduleInfo: defaultSchedule(Date.now()),
      payloadFormat: 'json',
    });
    t.not(created.status, 'error', JSON.stringify(created));
    const hookUrl = `${manager}/${String(created.id)}`;
    t.match(await con.get(hookUrl), { changeTypes: ['*'], scheduleInfo: {}, signatureKey: '', active: false });
    t.equal((await edit(con, hookUrl, { active: true })).status, 'success');
    t.match(await con.get(hookUrl), { name: 'gp', changeTypes: ['*'], scheduleInfo: {}, active: true });
  },
);

t.test(
  'tokens are read from the token parameter, X-Esri-Authorization and Authorization, on the admin API and the REST resources',
  async (t) => {
    const emulator = await startEmulator(t);
    const token = await emulator.token('orgadmin');
    const settings = `${emulator.url}/arcgis/admin/services/webhooks/settings?f=json`;
    const status = async (url: string, headers: Record<string, string> = {}): Promise<unknown> =>
      ((await (await fetch(url, { headers })).json()) as Record<string, Json>).code ?? 'ok';
    t.equal(await status(`${settings}&token=${token}`), 'ok', 'token parameter');
    t.equal(await status(settings, { 'X-Esri-Authorization': `Bearer ${token}` }), 'ok', 'X-Esri-Authorization');
    t.equal(await status(settings, { Authorization: `Bearer ${token}` }), 'ok', 'Authorization');
    t.equal(await status(settings, { 'x-esri-authorization': `bearer ${token}` }), 'ok', 'any case');
    t.equal(await status(settings), 499, 'no token');
    t.equal(await status(settings, { Authorization: 'Bearer not-a-token' }), 498, 'a wrong token');
    t.equal(await status(settings, { Authorization: `Basic ${token}` }), 499, 'not a bearer token');
    t.equal(await status(`${settings}&token=not-a-token`, { Authorization: `Bearer ${token}` }), 498, 'the parameter wins over the header');

    const rest = await fetch(`${emulator.url}/arcgis/rest/services/Tools/Buffer/GPServer/BufferPoints/jobs/unknown?f=json`, {
      headers: { 'X-Esri-Authorization': `Bearer ${token}` },
    });
    t.match(await rest.json(), { error: { code: 404 } }, 'the REST resources take the header too (a 404 for the job, not a 499)');
  },
);

t.test('the admin root and the info resources answer what clients discover the server with', async (t) => {
  const emulator = await startEmulator(t);
  const token = await emulator.token();
  t.match(await (await fetch(`${emulator.url}/arcgis/admin?f=json&token=${token}`)).json(), { currentVersion: 11.3, resources: Array });
  t.match(await (await fetch(`${emulator.url}/arcgis/admin?f=json`)).json(), { status: 'error', code: 499 });
  for (const path of ['/arcgis/info', '/arcgis/rest/info', '/arcgis/sharing/rest/info']) {
    t.same(
      await (await fetch(`${emulator.url}${path}?f=json`)).json(),
      {
        currentVersion: 11.3,
        fullVersion: '11.3.0',
        authInfo: {
          isTokenBasedSecurity: true,
          tokenServicesUrl: `${emulator.url}/arcgis/sharing/rest/generateToken`,
          shortLivedTokenValidity: 60,
        },
      },
      path,
    );
  }
});

t.test('scheduleInfo: every frequency real clients send is kept, and a bad one is refused', async (t) => {
  const emulator = await startEmulator(t);
  for (const frequency of ['second', 'minute', 'hour', 'day', 'week', 'month', 'year']) {
    const created = await emulator.admin('services/Hosted/Parcels.FeatureServer/webhooks/create', {
      name: frequency,
      hookUrl: 'https://receiver.example/hook',
      scheduleInfo: JSON.stringify({ name: frequency, startAt: 1, recurrenceInfo: { interval: 2, frequency } }),
    });
    t.match(created.scheduleInfo, { state: 'enabled', recurrenceInfo: { interval: 2, frequency } }, frequency);
  }
  const disabled = await emulator.admin('services/Hosted/Parcels.FeatureServer/webhooks/create', {
    name: 'disabled',
    hookUrl: 'https://receiver.example/hook',
    scheduleInfo: JSON.stringify({ state: 'disabled', recurrenceInfo: { interval: 1, frequency: 'hour' } }),
  });
  t.match(disabled.scheduleInfo, { state: 'disabled', recurrenceInfo: { interval: 1, frequency: 'hour' } });
  for (const scheduleInfo of [{ recurrenceInfo: { frequency: 'fortnight' } }, { state: 'paused' }, { recurrenceInfo: { interval: '5' } }]) {
    const refused = await emulator.admin('services/Hosted/Parcels.FeatureServer/webhooks/create', {
      name: 'bad',
      hookUrl: 'https://receiver.example/hook',
      scheduleInfo: JSON.stringify(scheduleInfo),
    });
    t.match(refused, { status: 'error', code: 400, messages: [/scheduleInfo/] }, JSON.stringify(scheduleInfo));
  }
});
