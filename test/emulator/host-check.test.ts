import { request } from 'node:http';
import t, { type Test } from 'tap';
import { buildEmulator, type EmulatorOptions } from '../../src/emulator/build-emulator.js';
import { hostNameOf, isLoopbackHost } from '../../src/emulator/host-check.js';
import { capturingLogger } from '../helpers/log-capture.js';

// The DNS-rebinding defence: a page on another site whose name resolves to 127.0.0.1 reaches the emulator with
// its own name in `Host`, and is refused; the names the emulator is reached by are answered.

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/** A real HTTP request to `address:port` carrying `host` as its Host header. */
function requestWithHost(address: string, port: number, path: string, host: string, method = 'GET'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: address, port, path, method, headers: { host } }, (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }));
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

/** An emulator listening on `address` (a free port), closed at teardown; its port and log lines. */
async function listening(t: Test, address: string, options: EmulatorOptions = {}) {
  const { logger, lines } = capturingLogger('info');
  const app = await buildEmulator({ loggerInstance: logger, ...options });
  await app.listen({ host: address, port: 0 });
  t.teardown(() => app.close());
  const bound = app.server.address();
  return { port: typeof bound === 'object' && bound !== null ? bound.port : 0, lines };
}

const PATHS = ['/emulator/webhooks', '/arcgis/admin/services/findServices?f=json', '/arcgis/rest/info?f=json', '/arcgis/sharing/rest/info'];

t.test('a request for another host is refused with 403 in the admin error shape, on every path', async (t) => {
  const { port, lines } = await listening(t, '127.0.0.1');
  for (const path of PATHS) {
    for (const host of [
      `rebind.evil.example:${port}`,
      'rebind.evil.example',
      `localhost.evil.example:${port}`,
      `evil.example@127.0.0.1:${port}`,
    ]) {
      const answer = await requestWithHost('127.0.0.1', port, path, host);
      t.equal(answer.status, 403, `${host} ${path}`);
      t.match(answer.body, { status: 'error', code: 403, messages: [String] });
    }
  }
  const refused = await requestWithHost('127.0.0.1', port, '/emulator/services/Tools/Buffer.GPServer/jobs', 'evil.example', 'POST');
  t.equal(refused.status, 403, 'a control POST is refused before it fires anything');
  t.match(lines.join('\n'), /emulator refused a request for a host it does not serve/);
});

t.test('the loopback names are answered, with any port, in any case', async (t) => {
  const { port } = await listening(t, '127.0.0.1');
  for (const host of [`127.0.0.1:${port}`, 'localhost', `localhost:${port}`, 'LocalHost.:80', `[::1]:${port}`, '[::1]', '127.0.0.1']) {
    t.equal((await requestWithHost('127.0.0.1', port, '/emulator/webhooks', host)).status, 200, host);
  }
});

t.test('allowedHosts, the host of publicUrl and the address the connection arrived at are answered; others are not', async (t) => {
  const { port } = await listening(t, '127.0.0.2', { allowedHosts: ['geohook-ci.example', '0.0.0.0'], publicUrl: 'http://emulator:7080' });
  const status = async (host: string): Promise<number> => (await requestWithHost('127.0.0.2', port, '/emulator/webhooks', host)).status;
  t.equal(await status(`geohook-ci.example:${port}`), 200, 'an allowed host');
  t.equal(await status('GEOHOOK-CI.EXAMPLE'), 200, 'in any case');
  t.equal(await status('emulator:7080'), 200, "the public URL's host");
  t.equal(await status(`127.0.0.2:${port}`), 200, 'the address it listens on');
  t.equal(await status(`127.0.0.3:${port}`), 403, 'another loopback address');
  t.equal(await status('0.0.0.0'), 403, 'a wildcard address is no name a client uses');
  t.equal(await status('other.example'), 403);
});

t.test('listening beyond the loopback interface logs a warning; on loopback it does not', async (t) => {
  const loopback = await listening(t, '127.0.0.1');
  t.notMatch(loopback.lines.join('\n'), /beyond the loopback/);
  const wildcard = await listening(t, '0.0.0.0');
  t.match(wildcard.lines.join('\n'), /"level":40.*"address":"0\.0\.0\.0".*listens beyond the loopback interface/);
});

t.test('hostNameOf reads a Host header; isLoopbackHost knows the loopback names and addresses', async (t) => {
  t.same(['localhost:7080', '[::1]:7080', 'Example.COM.', 'a@b', 'a/b', '::1', '', undefined].map(hostNameOf), [
    'localhost',
    '::1',
    'example.com',
    undefined,
    undefined,
    undefined,
    undefined,
    undefined,
  ]);
  t.same(
    ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]', '::ffff:127.0.0.1', '0.0.0.0', '::', '192.0.2.1', 'example.com'].map(
      isLoopbackHost,
    ),
    [true, true, true, true, true, true, false, false, false, false],
  );
});
