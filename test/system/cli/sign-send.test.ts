import t from 'tap';
import { findFreePort } from '../../../src/embedded/redis-server.js';
import { runCli } from '../../helpers/cli.js';
import { fixture, repoPath } from '../../helpers/paths.js';
import { startReceiver, TEST_KEY } from '../../helpers/receiver.js';
import { startRedis } from '../../helpers/redis.js';

// Each test spawns geohook processes, which take several times their quiet duration on a loaded two-core machine.
t.setTimeout(2 * 60_000);

const FIXTURE = repoPath('test', 'fixtures', 'enterprise-feature-created.json');

t.test('geohook sign prints the known-answer signature of a file', async (t) => {
  const result = await runCli(['sign', '--key', TEST_KEY, FIXTURE]);
  t.equal(result.code, 0);
  // openssl dgst -sha256 -hmac geohook-test-key -binary < enterprise-feature-created.json | base64
  t.equal(result.stdout, 'sha256=Je1SJ0A2aIdDdMnU6F6drbp9YrXnIpld0tvl+K7iSHk=\n');
});

t.test('geohook sign reads stdin and takes the key from HOOK_SECRETS', async (t) => {
  const result = await runCli(['sign'], { env: { HOOK_SECRETS: `${TEST_KEY},second` }, input: fixture('enterprise-feature-created.json') });
  t.equal(result.stdout, 'sha256=Je1SJ0A2aIdDdMnU6F6drbp9YrXnIpld0tvl+K7iSHk=\n');
});

t.test('geohook sign without any key fails with one clear line', async (t) => {
  const result = await runCli(['sign', FIXTURE]);
  t.equal(result.code, 1);
  t.equal(result.stdout, '');
  t.match(result.stderr, /^geohook: --key: a signature key is required \(or set HOOK_SECRETS\)\n$/);
});

t.test('geohook send delivers a signed body that the receiver accepts', async (t) => {
  const redis = await startRedis(t);
  const receiver = await startReceiver(t, redis);
  const result = await runCli(['send', `${receiver.url}/webhooks/default`, '--key', TEST_KEY, FIXTURE]);
  t.equal(result.code, 0, result.stderr);
  t.match(JSON.parse(result.stdout), { status: 202, body: { status: 'accepted', duplicate: false } });

  const unsigned = await runCli(['send', `${receiver.url}/webhooks/default`, FIXTURE]);
  t.equal(unsigned.code, 1);
  t.match(JSON.parse(unsigned.stdout), { status: 401, body: { code: 'GEOHOOK_ERR_MISSING_SIGNATURE' } });
  t.match(unsigned.stderr, /answered 401/);
});

t.test('geohook send to an unreachable URL fails with the reason', async (t) => {
  const port = await findFreePort();
  const result = await runCli(['send', `http://127.0.0.1:${port}/webhooks/default`, '--key', 'k', FIXTURE]);
  t.equal(result.code, 1);
  t.match(result.stderr, new RegExp(`^geohook: http://127\\.0\\.0\\.1:${port}/webhooks/default: .*ECONNREFUSED`));
});

t.test('every command has --help', async (t) => {
  for (const command of [[], ['up'], ['serve'], ['sign'], ['send']]) {
    const result = await runCli([...command, '--help']);
    t.equal(result.code, 0, `${command.join(' ') || 'geohook'} --help`);
    t.match(result.stdout, /^Usage: geohook/);
  }
});
