import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { loadConfig } from '../../src/config/load-config.js';
import { configFileSchema } from '../../src/config/schema.js';
import { findFreePort } from '../../src/embedded/redis-server.js';
import { sign } from '../../src/signature/sign.js';
import { startEmulator } from '../helpers/emulator.js';
import { registrationEnv, startGeohook } from '../helpers/geohook.js';
import { nodeCommand } from '../helpers/node-process.js';
import { fixture, repoPath } from '../helpers/paths.js';
import { uniquePrefix, TEST_KEY } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const example = (name: string): string => repoPath('examples', name);
const receiverExample = example('receiver.ts');
const consumerExample = example('consumer.ts');
const adminClientExample = example('admin-client.ts');
const followUpExample = example('follow-up.ts');
const changesExample = example('changes.ts');

/** A page of the repository, by its path from the root. */
const page = (path: string): string => readFileSync(repoPath(path), 'utf8');

/** Where each example is shown: the page must hold it, whole and unchanged, as a TypeScript block. */
const shownIn: readonly [string, readonly string[]][] = [
  ['README.md', [receiverExample, consumerExample]],
  ['docs/admin.md', [adminClientExample]],
  ['docs/consumers.md', [followUpExample]],
  ['docs/changes.md', [changesExample]],
];

/** Runs an example as the suite compiled it into dist-test/ (from the file shown in the docs); stdout and stderr are collected. */
function runExample(t: Test, source: string, env: Record<string, string>): { child: ChildProcess; output: () => string } {
  const compiled = repoPath('dist-test', 'examples', basename(source, '.ts') + '.js');
  const command = nodeCommand(compiled, [], { ...process.env, ...env }, { coverage: true, nodeArgs: ['--enable-source-maps'] });
  const child = spawn(command.file, command.args, { env: command.env, stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => {
    child.kill('SIGKILL');
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output };
}

/** The top-level sections of the GEOHOOK_CONFIG file: a JSON block with one of them is a config example. */
const configSections = new Set(Object.keys(configFileSchema.shape));

/** Every ```json block of a page, with `…` (an elided value) replaced by a placeholder. */
function jsonBlocks(text: string): string[] {
  return [...text.matchAll(/^```json\n([\s\S]*?)\n```$/gm)].map((match) => match[1]!.replaceAll('…', 'x'));
}

/** A JSON object with a section of the file, and no `status` (which marks an answer, such as /readyz's). */
function isConfigExample(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || 'status' in value) return false;
  return Object.keys(value).some((key) => configSections.has(key));
}

t.test('every JSON block of the docs parses, and every GEOHOOK_CONFIG example among them is a valid configuration', async (t) => {
  const expected: Record<string, number> = {
    'docs/configuration.md': 1,
    'docs/redis.md': 3,
    'docs/receiver.md': 2,
    'docs/registration.md': 1,
  };
  const pages = readdirSync(repoPath('docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);
  for (const path of ['README.md', ...pages]) {
    let examples = 0;
    for (const block of jsonBlocks(page(path))) {
      let value: unknown;
      t.doesNotThrow(() => (value = JSON.parse(block)), `${path}: ${block.slice(0, 60)} is JSON`);
      if (!isConfigExample(value)) continue;
      examples += 1;
      const dir = t.testdir({ 'geohook.json': block });
      // `register` needs an admin root.
      const env = { GEOHOOK_CONFIG: `${dir}/geohook.json`, ADMIN_URL: 'https://gis.example.com/arcgis/admin' };
      t.doesNotThrow(() => loadConfig(env), `${path}: ${block.slice(0, 60)}`);
    }
    t.ok(examples >= (expected[path] ?? 0), `${path}: ${examples} GEOHOOK_CONFIG examples found, at least ${expected[path] ?? 0} expected`);
  }
});

t.test('every GEOHOOK_CONFIG example of deploy/kubernetes/REDIS.md is a valid configuration', async (t) => {
  const blocks = [...page('deploy/kubernetes/REDIS.md').matchAll(/`(\{ "redis": [^`]*\})`/g)].map((match) =>
    match[1]!.replaceAll('…', 'x'),
  );
  t.ok(blocks.length >= 2, 'examples found');
  for (const block of blocks) {
    const dir = t.testdir({ 'geohook.json': block });
    t.doesNotThrow(() => loadConfig({ GEOHOOK_CONFIG: `${dir}/geohook.json` }), block.slice(0, 60));
  }
});

t.test('the README and the docs show the examples verbatim', async (t) => {
  for (const [path, files] of shownIn) {
    const text = page(path);
    for (const file of files) {
      const block = `\`\`\`ts\n${readFileSync(file, 'utf8').trim()}\n\`\`\``;
      t.ok(text.includes(block), `${path} embeds ${file} unchanged`);
    }
  }
});

t.test('the 10-line consumer of the README handles GP and feature events fired by the emulator', async (t) => {
  const consumerLines = readFileSync(consumerExample, 'utf8').trim().split('\n').length;
  t.ok(consumerLines <= 11, `the example is ${consumerLines} lines`);
  const redis = await startRedis(t);
  const emulator = await startEmulator(t);
  const prefix = uniquePrefix();
  const geohook = await startGeohook(
    t,
    redis,
    registrationEnv(emulator, ['Tools/Buffer.GPServer', 'Hosted/Parcels.FeatureServer'], prefix),
  );
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
  const { child, output } = runExample(t, receiverExample, {
    REDIS_URL: redis.url,
    HOOK_SECRETS: TEST_KEY,
    PORT: String(port),
    HOST: '127.0.0.1',
    GEOHOOK_PREFIX: uniquePrefix(),
    LOG_LEVEL: 'warn',
  });

  await waitFor('the example receiver to be ready', async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200, {
    intervalMs: 50,
  });
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

t.test('the admin-client example of docs/admin.md creates an active, signed webhook and finds the feature services', async (t) => {
  const emulator = await startEmulator(t);
  const hookUrl = 'http://127.0.0.1:8080/webhooks/default';
  const { child, output } = runExample(t, adminClientExample, {
    ADMIN_URL: emulator.baseUrl,
    ADMIN_USERNAME: 'admin',
    ADMIN_PASSWORD: 'admin.pass',
    HOOK_URL: hookUrl,
    HOOK_SECRETS: `${TEST_KEY},an-older-key`,
  });
  const [code] = await once(child, 'exit');
  t.equal(code, 0, output());
  const id = /^webhook (\S+) on Buffer: active$/m.exec(output())?.[1];
  t.ok(id, 'it prints the webhook it created');
  t.match(output(), /^feature services: Parcels, Roads, Zoning$/m);
  const webhook = await emulator.admin(`services/Tools/Buffer.GPServer/webhooks/${id}`);
  t.match(
    webhook,
    { name: 'buffer-done', hookUrl, signatureKey: TEST_KEY, active: true },
    'the emulator holds it, signed with the first key of HOOK_SECRETS',
  );
});

t.test('the follow-up example of docs/consumers.md reads the edits of a feature event and the results of a GP job', async (t) => {
  const redis = await startRedis(t);
  const emulator = await startEmulator(t);
  const prefix = uniquePrefix();
  const geohook = await startGeohook(
    t,
    redis,
    registrationEnv(emulator, ['Tools/Buffer.GPServer', 'Hosted/Parcels.FeatureServer'], prefix),
  );
  await waitFor('registration', async () => (await geohook.readyz()).status === 200);
  const consumer = runExample(t, followUpExample, {
    REDIS_URL: redis.url,
    GEOHOOK_PREFIX: prefix,
    GIS_SERVER: emulator.url,
    ADMIN_USERNAME: 'admin',
    ADMIN_PASSWORD: 'admin.pass',
  });

  const job = await emulator.control('services/Tools/Buffer.GPServer/jobs', { outcome: 'succeeded' });
  t.equal(job.status, 200);
  t.equal(
    (await emulator.control('services/Hosted/Parcels.FeatureServer/edits', { changeType: 'FeaturesCreated', layerId: 0 })).status,
    200,
  );
  await waitFor('both events followed up', async () => /^job /m.test(consumer.output()) && /^layer /m.test(consumer.output()));
  t.match(
    consumer.output(),
    new RegExp(`^job ${String(job.body.jobId)}: Output_Polygons, Summary$`, 'm'),
    'the GP job results, read from its statusURL',
  );
  t.match(consumer.output(), /^layer 0: 1 added$/m, 'the created feature, read from the changesUrl');
  consumer.child.kill('SIGTERM');
  const [code] = await once(consumer.child, 'exit');
  t.equal(code, 0, 'SIGTERM closes the subscription and the process ends');
});

t.test('the change-events example of docs/changes.md prints a parcel whose status changed, and a deleted one', async (t) => {
  const redis = await startRedis(t);
  const emulator = await startEmulator(t);
  const prefix = uniquePrefix();
  const geohook = await startGeohook(t, redis, {
    ...registrationEnv(emulator, ['Hosted/Parcels.FeatureServer'], prefix),
    CHANGES: 'Hosted/Parcels.FeatureServer',
    CHANGES_TRACK: 'status',
  });
  await waitFor('registration', async () => (await geohook.readyz()).status === 200);
  const consumer = runExample(t, changesExample, { REDIS_URL: redis.url, GEOHOOK_PREFIX: prefix });
  const raw = new Redis(redis.url);
  t.teardown(() => raw.disconnect());
  // Each edit resolved before the next: edits that share a range are its net change (an add then a delete is none).
  const resolved = async (): Promise<number> =>
    Number(await raw.hget(`${prefix}:changes:resolved`, 'default Hosted/Parcels.FeatureServer'));
  const edit = async (edits: unknown): Promise<Record<string, unknown>> => {
    const { body } = await emulator.control('services/Hosted/Parcels.FeatureServer/applyEdits', { edits });
    await waitFor('the edit resolved', async () => (await resolved()) >= (body.serverGen as number));
    return body;
  };
  const added = await edit([{ id: 0, adds: [{ attributes: { parcel_id: 'P-1', status: 'Open' } }] }]);
  const globalId = (added.results as { addResults: { globalId: string }[] }[])[0]!.addResults[0]!.globalId;
  await edit([{ id: 0, updates: [{ attributes: { objectid: 1, owner: 'Ada' } }] }]);
  await edit([{ id: 0, updates: [{ attributes: { objectid: 1, status: 'Closed' } }] }]);
  await edit([{ id: 0, deletes: [1] }]);
  await waitFor('both lines', async () => consumer.output().includes('deleted'));
  t.same(
    consumer.output().trim().split('\n'),
    [`Parcels ${globalId}: Open → Closed`, `Parcels ${globalId}: deleted`],
    'the owner change is not printed',
  );
  consumer.child.kill('SIGTERM');
  const [code] = await once(consumer.child, 'exit');
  t.equal(code, 0);
});
