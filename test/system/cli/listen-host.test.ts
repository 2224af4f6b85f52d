import { once } from 'node:events';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import t, { type Test } from 'tap';
import { findFreePort } from '../../../src/embedded/redis-server.js';
import { startCli } from '../../helpers/cli.js';

// Each test spawns geohook processes, which take several times their quiet duration on a loaded two-core machine.
t.setTimeout(2 * 60_000);

/** An IPv4 address of this machine that is not loopback, if it has one. */
const lanAddress = Object.values(networkInterfaces())
  .flat()
  .find((entry) => entry !== undefined && entry.family === 'IPv4' && !entry.internal)?.address;

/** Why the checks from another interface are skipped, or false. */
const NO_LAN = lanAddress === undefined && 'this machine has no address but loopback to try';

/** True when a TCP connection to `host:port` is accepted. */
async function accepts(host: string, port: number): Promise<boolean> {
  const socket = connect(port, host);
  const outcome = await new Promise<boolean>((resolve) => socket.once('connect', () => resolve(true)).once('error', () => resolve(false)));
  socket.destroy();
  return outcome;
}

/** Runs `geohook up` in a directory of its own until it is ready; stopped with SIGINT at teardown. */
async function up(t: Test, args: string[], env: Record<string, string>): Promise<{ port: number; output: () => string }> {
  const port = await findFreePort();
  const { child, output } = await startCli(
    ['up', '--port', String(port), ...args],
    { EMULATOR_PORT: String(await findFreePort()), LOG_FORMAT: 'json', ...env },
    /ready: events are printed/,
    { cwd: t.testdir() },
  );
  t.teardown(async () => {
    child.kill('SIGINT');
    await once(child, 'exit');
  });
  return { port, output };
}

t.test('geohook up listens on 127.0.0.1 only, and says nothing of other machines', async (t) => {
  const { port, output } = await up(t, [], {});
  const listening = output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { component?: string; msg: string })
    .filter((entry) => entry.component === undefined && entry.msg.startsWith('Server listening at '));
  t.same(
    listening.map((entry) => entry.msg),
    [`Server listening at http://127.0.0.1:${port}`],
    'the receiver lists one address: loopback',
  );
  t.notMatch(output(), /^notice /m, 'no notice');
  t.ok(await accepts('127.0.0.1', port), 'reached on loopback');
  t.notOk(lanAddress !== undefined && (await accepts(lanAddress, port)), `not reached at ${lanAddress}`, { skip: NO_LAN });
});

t.test('an explicit HOST, as variable or flag, still wins; beyond loopback geohook up prints a notice', async (t) => {
  for (const [name, args, env] of [
    ['HOST=0.0.0.0', [], { HOST: '0.0.0.0' }],
    ['--host 0.0.0.0 over HOST=127.0.0.1', ['--host', '0.0.0.0'], { HOST: '127.0.0.1' }],
  ] as const) {
    const { port, output } = await up(t, [...args], env);
    t.match(output(), new RegExp(`^notice {5}the receiver listens on 0\\.0\\.0\\.0:${port}: other machines can reach it`, 'm'), name);
    t.ok(lanAddress !== undefined && (await accepts(lanAddress, port)), `${name}: reached at ${lanAddress}`, { skip: NO_LAN });
  }
});

t.test('geohook serve keeps 0.0.0.0 by default, as the container does, and prints no notice', async (t) => {
  const port = await findFreePort();
  const { child, output } = await startCli(
    ['serve', '--port', String(port)],
    { HOOK_SECRETS: 'a-key-of-some-length' },
    /Server listening/,
    { cwd: t.testdir() },
  );
  t.teardown(async () => {
    child.kill('SIGTERM');
    await once(child, 'exit');
  });
  t.ok(await accepts('127.0.0.1', port), 'reached on loopback');
  t.ok(lanAddress !== undefined && (await accepts(lanAddress, port)), `reached at ${lanAddress}`, { skip: NO_LAN });
  t.notMatch(output(), /^notice /m);
});
