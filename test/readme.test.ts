import t, { type Test } from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config/load-config.js';
import { findFreePort } from '../src/embedded/redis-server.js';
import { sign } from '../src/signature/sign.js';
import { startEmulator } from './helpers/emulator.js';
import { registrationEnv, startGeohook, waitFor } from './helpers/geohook.js';
import { startRedis } from './helpers/redis.js';
import { fixture, uniquePrefix, TEST_KEY } from './helpers/receiver.js';

const example = fileURLToPath(new URL('../examples/receiver.ts', import.meta.url));
const consumerExample = fileURLToPath(new URL('../examples/consumer.ts', import.meta.url));

/** Runs a TypeScript example with the same loaders as this test process; stdout and stderr are collected. */
function runExample(t: Test, file: string, env: Record<string, string>): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, [...process.execArgv, file], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => {
    child.kill('SIGKILL');
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output };
}

t.test('every GEOHOOK_CONFIG example of the README and deploy/kubernetes/REDIS.md is a valid configuration', async (t) => {
  for (const doc of ['../README.md', '../deploy/kubernetes/REDIS.md']) {
    const text = readFileSync(new URL(doc, import.meta.url), 'utf8');
    const blocks = [...text.matchAll(/```json\n(\{[\s\S]*?)\n```/g), ...text.matchAll(/`(\{ "redis": [^`]*\})`/g)].map((match) => match[1]!.replaceAll('…', 'x'));
    const configs = blocks.filter((block) => !block.includes('"jobId"') && /"(hooks|redis)"/.test(block));
    t.ok(configs.length >= (doc.endsWith('README.md') ? 3 : 2), `${doc}: examples found`);
    for (const block of configs) {
      const dir = t.testdir({ 'geohook.json': block });
      t.doesNotThrow(() => loadConfig({ GEOHOOK_CONFIG: `${dir}/geohook.json` }), block.slice(0, 60));
    }
  }
});

t.test('the README shows the examples verbatim', async (t) => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  for (const file of [example, consumerExample]) t.ok(readme.includes(readFileSync(file, 'utf8').trim()), `README.md embeds ${file} unchanged`);
});

t.test('the 10-line consumer of the README handles GP and feature events fired by the emulator', async (t) => {
  const consumerLines = readFileSync(consumerExample, 'utf8').trim().split('\n').length;
  t.ok(consumerLines <= 11, `the example is ${consumerLines} lines`);
  const redis = await startRedis(t);
  const emulator = await startEmulator(t);
  const prefix = uniquePrefix();
  const geohook = await startGeohook(t, redis, registrationEnv(emulator, ['Tools/Buffer.GPServer', 'Hosted/Parcels.FeatureServer'], prefix));
  await waitFor('registration', async () => (await geohook.readyz()).status === 200);
  const consumer = runExample(t, consumerExample, { REDIS_URL: redis.url, GEOHOOK_PREFIX: prefix });

  t.equal((await emulator.control('services/Tools/Buffer.GPServer/jobs', { outcome: 'failed' })).status, 200);
  t.equal((await emulator.control('services/Hosted/Parcels.FeatureServer/edits', { changeType: 'FeaturesDeleted' })).status, 200);
  await waitFor('both events handled', async () => consumer.output().split('\n').length > 2);
  t.match(consumer.output(), 'GP job gp.job.failed on Buffer');
  t.match(consumer.output(), 'feature.FeaturesDeleted on Parcels');
  consumer.child.kill('SIGTERM');
  const [code] = await once(consumer.child, 'exit');
  t.equal(code, 0, 'SIGTERM closes the subscription and the process ends');
});

t.test('the README example receives a signed GP delivery and its worker consumes it', async (t) => {
  const redis = await startRedis(t);
  const port = await findFreePort();
  // The same loaders as this test process, so that the TypeScript example runs as it stands.
  const { child, output } = runExample(t, example, { REDIS_URL: redis.url, HOOK_SECRETS: TEST_KEY, PORT: String(port), HOST: '127.0.0.1', GEOHOOK_PREFIX: uniquePrefix(), LOG_LEVEL: 'warn' });

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
  await waitFor('the event handled', async () => output().includes(id));
  t.match(output(), `gp.job.succeeded Buffer ${id}`);
  child.kill('SIGTERM');
  const [code] = await once(child, 'exit');
  t.equal(code, 0);
});
