import t from 'tap';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { findFreePort } from '../src/embedded/redis-server.js';
import { sign } from '../src/signature/sign.js';
import { startRedis } from './helpers/redis.js';
import { fixture, uniquePrefix, TEST_KEY } from './helpers/receiver.js';

const example = fileURLToPath(new URL('../examples/receiver.ts', import.meta.url));

t.test('the README shows examples/receiver.ts verbatim', async (t) => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  t.ok(readme.includes(readFileSync(example, 'utf8').trim()), 'README.md embeds the example unchanged');
});

t.test('the README example receives a signed GP delivery and its worker consumes it', async (t) => {
  const redis = await startRedis(t);
  const port = await findFreePort();
  // The same loaders as this test process, so that the TypeScript example runs as it stands.
  const child = spawn(process.execPath, [...process.execArgv, example], {
    env: { ...process.env, REDIS_URL: redis.url, HOOK_SECRETS: TEST_KEY, PORT: String(port), HOST: '127.0.0.1', GEOHOOK_PREFIX: uniquePrefix(), LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => {
    child.kill('SIGKILL');
  });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stdout += chunk.toString()));

  let status = 0;
  for (let attempt = 0; attempt < 200 && status !== 200; attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    status = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status, () => 0);
  }
  t.equal(status, 200, 'the example receiver is ready');
  const body = fixture('enterprise-gp-succeeded.json');
  const response = await fetch(`http://127.0.0.1:${port}/webhooks/default`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service': sign(TEST_KEY, body) },
    body,
  });
  t.equal(response.status, 202);
  const { id } = (await response.json()) as { id: string };
  for (let attempt = 0; attempt < 200 && !stdout.includes(id); attempt += 1) await new Promise((resolve) => setTimeout(resolve, 25));
  t.match(stdout, `gp.job.succeeded Buffer ${id}`);
  child.kill('SIGTERM');
  const [code] = await once(child, 'exit');
  t.equal(code, 0);
});
