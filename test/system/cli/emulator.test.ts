import { once } from 'node:events';
import { request } from 'node:http';
import t from 'tap';
import { findFreePort } from '../../../src/embedded/redis-server.js';
import { runCli, startCli } from '../../helpers/cli.js';

// Each test spawns geohook processes, which take several times their quiet duration on a loaded two-core machine.
t.setTimeout(2 * 60_000);

t.test('geohook emulator serves the admin API on --port and stops on SIGTERM', async (t) => {
  const port = await findFreePort();
  const { child } = await startCli(['emulator', '--port', String(port)], {}, /Server listening/);
  t.teardown(() => {
    child.kill('SIGKILL');
  });
  const tokenAnswer = await fetch(`http://127.0.0.1:${port}/arcgis/sharing/rest/generateToken`, {
    method: 'POST',
    body: new URLSearchParams({ username: 'admin', password: 'admin.pass', f: 'json' }),
  });
  const { token } = (await tokenAnswer.json()) as { token: string };
  const found = await fetch(`http://127.0.0.1:${port}/arcgis/admin/services/findServices`, {
    method: 'POST',
    body: new URLSearchParams({ token, f: 'json' }),
  });
  t.equal(((await found.json()) as { filteredServices: unknown[] }).filteredServices.length, 6);
  child.kill('SIGTERM');
  const [code] = await once(child, 'exit');
  t.equal(code, 0);
});

t.test('geohook emulator takes users from EMULATOR_USERS and the port from EMULATOR_PORT', async (t) => {
  const port = await findFreePort();
  const { child } = await startCli(
    ['emulator'],
    { EMULATOR_PORT: String(port), EMULATOR_USERS: 'ops:s3cret:orgadmin' },
    /Server listening/,
  );
  t.teardown(() => {
    child.kill('SIGKILL');
  });
  const answer = await fetch(`http://127.0.0.1:${port}/arcgis/admin/generateToken`, {
    method: 'POST',
    body: new URLSearchParams({ username: 'ops', password: 's3cret' }),
  });
  t.match(await answer.json(), { token: String });
});

t.test('a bad --catalog, EMULATOR_PORT or EMULATOR_USERS stops the emulator with one line', async (t) => {
  const dir = t.testdir({ 'catalog.json': '[{"folderName":"a","serviceName":"b","type":"nope"}]' });
  const catalog = await runCli(['emulator', '--catalog', `${dir}/catalog.json`]);
  t.equal(catalog.code, 1);
  t.match(catalog.stderr, /^geohook: --catalog: .*catalog\.json at \[0\.type\]: a service type such as GPServer or FeatureServer\n$/);
  const port = await runCli(['emulator'], { env: { EMULATOR_PORT: 'seventy' } });
  t.equal(port.stderr, 'geohook: EMULATOR_PORT: a port number from 0 to 65535 (got "seventy")\n');
  const users = await runCli(['emulator'], { env: { EMULATOR_USERS: 'justaname' } });
  t.match(users.stderr, /^geohook: EMULATOR_USERS: "justaname" is not user:password:role/);
});

t.test('geohook emulator --port 0 listens on a free port and puts that port in the URLs it hands out', async (t) => {
  const { child, output } = await startCli(['emulator', '--port', '0'], {}, /Server listening at http:\/\/127\.0\.0\.1:\d+/);
  t.teardown(() => {
    child.kill('SIGKILL');
  });
  const port = Number(/Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(output())![1]);
  t.ok(port > 0);
  const tokenAnswer = await fetch(`http://127.0.0.1:${port}/arcgis/sharing/rest/generateToken`, {
    method: 'POST',
    body: new URLSearchParams({ username: 'admin', password: 'admin.pass', f: 'json' }),
  });
  const { token } = (await tokenAnswer.json()) as { token: string };
  const base = `http://127.0.0.1:${port}/arcgis/rest/services/Hosted/Parcels/FeatureServer/extractChanges`;
  const answer = await fetch(base, { method: 'POST', body: new URLSearchParams({ token, async: 'true', serverGens: '[0,1]', f: 'json' }) });
  t.match(await answer.json(), {
    statusUrl: new RegExp(`^http://127\\.0\\.0\\.1:${port}/arcgis/rest/services/Hosted/Parcels/FeatureServer/jobs/`),
  });
});

/** The HTTP status of a GET of `/emulator/webhooks` at 127.0.0.1:`port` with `host` as the Host header. */
function statusFor(port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: '127.0.0.1', port, path: '/emulator/webhooks', headers: { host } }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

t.test('geohook emulator answers the names of --allowed-host and --public-url, and refuses other hosts', async (t) => {
  const { child, output } = await startCli(
    [
      'emulator',
      '--port',
      '0',
      '--allowed-host',
      'a.example,b.example',
      '--allowed-host',
      'c.example',
      '--public-url',
      'http://emulator:7080',
    ],
    {},
    /Server listening at http:\/\/127\.0\.0\.1:\d+/,
  );
  t.teardown(() => {
    child.kill('SIGKILL');
  });
  const port = Number(/Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(output())![1]);
  for (const host of ['a.example', 'b.example:7080', 'c.example', 'emulator:7080', `127.0.0.1:${port}`, 'localhost'])
    t.equal(await statusFor(port, host), 200, host);
  t.equal(await statusFor(port, 'd.example'), 403, 'another name');
  t.notMatch(output(), /beyond the loopback/, 'no warning on 127.0.0.1');
});
