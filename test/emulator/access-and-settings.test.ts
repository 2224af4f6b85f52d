import t from 'tap';
import { EmulatorClock } from '../../src/emulator/clock.js';
import { startEmulator } from '../helpers/emulator.js';

const hookUrl = 'http://127.0.0.1:8080/webhooks/default';

t.test('generateToken answers {token, expires, ssl} for a built-in user at both addresses', async (t) => {
  const emulator = await startEmulator(t);
  for (const url of [`${emulator.url}/arcgis/sharing/rest/generateToken`, `${emulator.baseUrl}/generateToken`]) {
    const before = Date.now();
    const answer = (await (
      await fetch(url, {
        method: 'POST',
        body: new URLSearchParams({ username: 'orgadmin', password: 'orgadmin.pass', expiration: '5', f: 'json' }),
      })
    ).json()) as Record<string, unknown>;
    t.match(answer, { token: String, ssl: false });
    t.ok(
      (answer.expires as number) >= before + 5 * 60_000 - 1000 && (answer.expires as number) <= Date.now() + 5 * 60_000,
      'expires in 5 minutes',
    );
  }
});

t.test('wrong credentials: the portal error shape at sharing/rest, the admin shape under the admin root', async (t) => {
  const emulator = await startEmulator(t);
  const body = new URLSearchParams({ username: 'admin', password: 'nope', f: 'json' });
  t.same(await (await fetch(`${emulator.url}/arcgis/sharing/rest/generateToken`, { method: 'POST', body })).json(), {
    error: { code: 400, message: 'Unable to generate token.', details: ['Invalid username or password.'] },
  });
  t.same(await (await fetch(`${emulator.baseUrl}/generateToken`, { method: 'POST', body })).json(), {
    status: 'error',
    messages: ['Unable to generate token.', 'Invalid username or password.'],
    code: 400,
  });
});

t.test('a missing token is 499, an unknown one 498, an expired one 498', async (t) => {
  const clock = new EmulatorClock();
  const emulator = await startEmulator(t, { clock });
  t.match(await emulator.admin('services/findServices', { token: '' }), { status: 'error', code: 499 });
  t.match(await emulator.admin('services/findServices', { token: 'forged' }), { status: 'error', code: 498, messages: ['Invalid token.'] });
  const token = await emulator.token();
  t.match(await emulator.admin('services/findServices', { token }), { filteredServices: Array });
  clock.advanceDays(1);
  t.match(await emulator.admin('services/findServices', { token }), {
    status: 'error',
    code: 498,
    messages: ['Invalid token.', 'Token has expired.'],
  });
});

t.test('role rules: viewer may do nothing, admin everything but settings, orgadmin everything', async (t) => {
  const emulator = await startEmulator(t);
  const operations: [string, Record<string, string>][] = [
    ['services/Buffer.GPServer/webhooks/create', { name: 'x', hookUrl }],
    ['services/Buffer.GPServer/webhooks/activateAll', {}],
    ['services/Buffer.GPServer/webhooks', {}],
    ['services/findServices', {}],
    ['services/Buffer.GPServer/placementPolicy', {}],
  ];
  for (const [path, params] of operations) {
    t.match(await emulator.admin(path, params, 'viewer'), { status: 'error', code: 403 }, `viewer: ${path}`);
    t.notMatch(await emulator.admin(path, params, 'admin'), { status: 'error' }, `admin: ${path}`);
    t.notMatch(await emulator.admin(path, params, 'orgadmin'), { status: 'error' }, `orgadmin: ${path}`);
  }
  t.match(await emulator.admin('services/webhooks/settings', {}, 'admin'), {
    status: 'error',
    code: 403,
    messages: [/Required role: orgadmin/],
  });
  t.match(await emulator.admin('services/webhooks/settings', {}, 'viewer'), { status: 'error', code: 403 });
  t.match(await emulator.admin('services/webhooks/settings', {}, 'orgadmin'), { status: 'success' });
});

t.test('EMULATOR_USERS-style users replace the built-in ones', async (t) => {
  const { loadEmulatorConfig } = await import('../../src/config/load-config.js');
  const users = (text: string) => loadEmulatorConfig({ EMULATOR_USERS: text }).users;
  const emulator = await startEmulator(t, { users: users('ops:secret:orgadmin')! });
  const ok = await (
    await fetch(`${emulator.baseUrl}/generateToken`, { method: 'POST', body: new URLSearchParams({ username: 'ops', password: 'secret' }) })
  ).json();
  t.match(ok, { token: String });
  const gone = await (
    await fetch(`${emulator.baseUrl}/generateToken`, {
      method: 'POST',
      body: new URLSearchParams({ username: 'admin', password: 'admin.pass' }),
    })
  ).json();
  t.match(gone, { status: 'error', code: 400 });
  t.throws(() => users('ops:secret:root'), { code: 'GEOHOOK_ERR_CONFIG', message: /EMULATOR_USERS: "ops:secret:root"/ });
});

t.test('settings echo the five fields with the spec defaults', async (t) => {
  const emulator = await startEmulator(t);
  t.same(await emulator.admin('services/webhooks/settings', {}, 'orgadmin'), {
    notificationAttempts: 3,
    notificationTimeOutInSeconds: 10,
    notificationElapsedTimeInSeconds: 5,
    numberOfFailures: 5,
    daysInPast: 5,
    status: 'success',
  });
  const changed = await emulator.admin('services/webhooks/settings', { notificationAttempts: '5', daysInPast: '7' }, 'orgadmin');
  t.match(changed, { notificationAttempts: 5, daysInPast: 7, notificationTimeOutInSeconds: 10, status: 'success' });
});

t.test('every settings bound is enforced, inclusive, and names the parameter', async (t) => {
  const emulator = await startEmulator(t);
  const bounds: [string, number, number][] = [
    ['notificationAttempts', 1, 5],
    ['notificationTimeOutInSeconds', 1, 60],
    ['notificationElapsedTimeInSeconds', 1, 3600],
    ['numberOfFailures', 1, 100],
    ['daysInPast', 1, 30],
  ];
  for (const [name, min, max] of bounds) {
    for (const ok of [min, max]) {
      t.match(
        await emulator.admin('services/webhooks/settings', { [name]: String(ok) }, 'orgadmin'),
        { [name]: ok, status: 'success' },
        `${name}=${ok}`,
      );
    }
    for (const bad of [String(min - 1), String(max + 1), '2.5', 'ten']) {
      const answer = await emulator.admin('services/webhooks/settings', { [name]: bad }, 'orgadmin');
      t.match(
        answer,
        { status: 'error', code: 400, messages: [new RegExp(`'${name}': must be an integer from ${min} to ${max}`)] },
        `${name}=${bad}`,
      );
    }
  }
});

t.test('findServices lists every service with every field of the record, and each filter narrows it', async (t) => {
  const emulator = await startEmulator(t);
  const all = (await emulator.admin('services/findServices')).filteredServices as Record<string, unknown>[];
  t.equal(all.length, 6);
  const fields = [
    'id',
    'serviceName',
    'type',
    'folderName',
    'description',
    'capabilities',
    'provider',
    'clusterName',
    'minInstancesPerNode',
    'maxInstancesPerNode',
    'instancesPerContainer',
    'maxWaitTime',
    'maxStartupTime',
    'maxIdleTime',
    'maxUsageTime',
    'loadBalancing',
    'isolationLevel',
    'configuredState',
    'recycleInterval',
    'recycleStartTime',
    'keepAliveInterval',
    'private',
    'isDefault',
    'maxUploadFileSize',
    'allowedUploadFileTypes',
    'properties',
    'jsonProperties',
    'portalProperties',
    'extensions',
    'datasets',
    'frameworkProperties',
    'serverId',
  ];
  t.same(Object.keys(all[0]!).sort(), [...fields].sort());
  t.match(all[0], { loadBalancing: 'ROUND_ROBIN', isolationLevel: 'HIGH', configuredState: 'STARTED', recycleStartTime: /^\d\d:\d\d$/ });
  const names = async (params: Record<string, string>) =>
    ((await emulator.admin('services/findServices', params)).filteredServices as { serviceName: string }[]).map((s) => s.serviceName);
  t.same(await names({ filterFolderName: 'Hosted' }), ['Parcels', 'Roads', 'Zoning']);
  t.same(await names({ filterServiceName: 'buffer' }), ['Buffer']);
  t.same(await names({ filterServiceType: 'GPServer' }), ['Buffer', 'Geocode']);
  t.same(await names({ filterServiceProvider: 'SDS' }), ['Parcels', 'Roads', 'Zoning', 'World']);
  t.same(
    await names({ filterServiceId: '' }),
    ['Buffer', 'Geocode', 'Parcels', 'Roads', 'Zoning', 'World'],
    'an empty id filter is accepted',
  );
  const roads = all.find((s) => s.serviceName === 'Roads')!;
  t.same(await names({ filterServiceId: roads.id as string }), ['Roads']);
  t.same(await names({ filterFolderName: 'Hosted', filterServiceType: 'GPServer' }), []);
});

t.test('unknown routes, wrong methods, non-form bodies and oversized bodies get the admin shape, never a stack', async (t) => {
  const emulator = await startEmulator(t);
  const unknown = await fetch(`${emulator.baseUrl}/services/nowhere/at/all`);
  t.equal(unknown.status, 200);
  t.match(await unknown.json(), { status: 'error', code: 404 });
  t.match(
    await (await fetch(`${emulator.baseUrl}/services/Buffer.GPServer/placementPolicy/edit`)).json(),
    { status: 'error', code: 404 },
    'GET on a POST operation',
  );
  const json = await fetch(`${emulator.baseUrl}/services/findServices`, {
    method: 'POST',
    headers: { 'content-type': 'text/xml' },
    body: '<x/>',
  });
  t.match(await json.json(), { status: 'error', code: 400, messages: [/x-www-form-urlencoded/] });
  const huge = await fetch(`${emulator.baseUrl}/services/findServices`, {
    method: 'POST',
    body: new URLSearchParams({ token: 'x', pad: 'p'.repeat(2_000_000) }),
  });
  const answer = await huge.text();
  t.match(JSON.parse(answer), { status: 'error', code: 400, messages: [/too large/] });
  t.notMatch(answer, /at .*\.(js|ts):\d+/, 'no stack trace');
});

t.test('a catalogue file replaces the default one and is validated with clear errors', async (t) => {
  const { loadCatalog } = await import('../../src/emulator/catalog.js');
  const dir = t.testdir({
    'good.json': JSON.stringify([{ folderName: 'Ops', serviceName: 'Flood', type: 'GPServer', asynchronous: true }]),
    'bad-type.json': JSON.stringify([{ folderName: 'Ops', serviceName: 'Flood', type: 'Gp' }]),
    'dupe.json': JSON.stringify([
      { folderName: 'a', serviceName: 'b', type: 'GPServer' },
      { folderName: 'a', serviceName: 'b', type: 'GPServer' },
    ]),
    'broken.json': '[{',
  });
  const catalog = loadCatalog(`${dir}/good.json`);
  const emulator = await startEmulator(t, { catalog });
  t.same(
    ((await emulator.admin('services/findServices')).filteredServices as { serviceName: string }[]).map((s) => s.serviceName),
    ['Flood'],
  );
  t.throws(() => loadCatalog(`${dir}/bad-type.json`), {
    message: /--catalog: .*bad-type\.json at \[0\.type\]: a service type such as GPServer/,
  });
  t.throws(() => loadCatalog(`${dir}/dupe.json`), { message: /a\/b\.GPServer is listed twice/ });
  t.throws(() => loadCatalog(`${dir}/broken.json`), { message: /--catalog: cannot read .*broken\.json \(not valid JSON\)/ });
  t.throws(() => loadCatalog(`${dir}/missing.json`), { message: /\(ENOENT\)/ });
});
