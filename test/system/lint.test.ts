import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ESLint } from 'eslint';
import t from 'tap';
import { repoRoot as root } from '../helpers/paths.js';

/** The layering and cycle rules of eslint.config.js fail what they are there to fail. */
const eslint = new ESLint({ cwd: root });

async function rulesBroken(code: string, filePath: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(root, filePath) });
  return result!.messages.filter((message) => message.severity === 2).map((message) => message.ruleId ?? message.message);
}

t.test('a feature folder importing the emulator fails the lint, by path or by package entry', async (t) => {
  t.match(await rulesBroken("export { EmulatorClock } from '../emulator/clock.js';\n", 'src/admin/probe.ts'), [
    'no-restricted-imports',
    'import-x/no-restricted-paths',
  ]);
  t.same(await rulesBroken("export { buildEmulator } from 'geohook/emulator';\n", 'src/admin/probe.ts'), ['import-x/no-restricted-paths']);
  t.same(await rulesBroken("export { buildEmulator } from 'geohook/emulator';\n", 'src/cli/probe.ts'), [], 'the CLI may');
});

t.test('config importing a feature folder fails the lint', async (t) => {
  t.same(await rulesBroken("export { queueNames } from '../queue/names.js';\n", 'src/config/probe.ts'), ['import-x/no-restricted-paths']);
  t.same(
    await rulesBroken("export { changeTypeValues } from '../arcgis/change-types.js';\n", 'src/config/probe.ts'),
    [],
    'the vocabulary it may',
  );
});

t.test('backfill and doctor reading a consumer or receiver module fails the lint', async (t) => {
  for (const folder of ['backfill', 'doctor'])
    t.same(
      await rulesBroken("export { fetchChanges } from '../consumers/follow-up.js';\n", `src/${folder}/probe.ts`),
      ['import-x/no-restricted-paths'],
      folder,
    );
  t.same(await rulesBroken("export { readChanges } from '../arcgis-request/extract-changes.js';\n", 'src/backfill/probe.ts'), []);
  t.same(await rulesBroken("export { buildReceiver } from '../receiver/build-receiver.js';\n", 'src/backfill/probe.ts'), [
    'import-x/no-restricted-paths',
  ]);
  t.same(
    await rulesBroken("export { buildEvent } from '../events/build-event.js';\n", 'src/backfill/probe.ts'),
    [],
    'the event model it may',
  );
});

t.test('the receiver importing the dashboard or what its views read fails the lint: the dashboard is mounted above it', async (t) => {
  const borrowed = [
    ['dashboard/mount-dashboard.js', 'mountDashboard'],
    ['changes/changes-status.js', 'readChangesStatus'],
    ['mirror/mirror-status.js', 'createMirrorStatusReader'],
    ['relay/relay-status.js', 'readRelayStatus'],
    ['subscriptions/subscription-registry.js', 'SubscriptionRegistry'],
  ] as const;
  for (const [module, name] of borrowed)
    t.same(
      await rulesBroken(`export { ${name} } from '../${module}';\n`, 'src/receiver/probe.ts'),
      ['import-x/no-restricted-paths'],
      module,
    );
  t.same(
    await rulesBroken("export { sendError } from '../receiver/error-reply.js';\n", 'src/dashboard/probe.ts'),
    [],
    'the dashboard may import the receiver',
  );
});

t.test('the fan-out importing a consumer, relay or subscription module fails the lint: they share its patterns', async (t) => {
  for (const [module, name] of [
    ['consumers/subscribe.js', 'subscribe'],
    ['relay/relay-route.js', 'createRelayRoute'],
    ['subscriptions/subscription-registry.js', 'SubscriptionRegistry'],
  ] as const)
    t.same(await rulesBroken(`export { ${name} } from '../${module}';\n`, 'src/fanout/probe.ts'), ['import-x/no-restricted-paths'], module);
  t.same(await rulesBroken("export { compilePattern } from '../fanout/event-patterns.js';\n", 'src/consumers/probe.ts'), []);
});

t.test("the mirror and change events importing the backfill fails the lint: a service's reads are in arcgis-request/", async (t) => {
  for (const folder of ['mirror', 'changes'])
    t.same(
      await rulesBroken("export { createSharedReads } from '../backfill/shared-reads.js';\n", `src/${folder}/probe.ts`),
      ['import-x/no-restricted-paths'],
      folder,
    );
  t.same(
    await rulesBroken("export { readServerGens } from '../arcgis-request/server-generations.js';\n", 'src/mirror/probe.ts'),
    [],
    'the reads it may',
  );
});

t.test('src/server.ts over 160 lines fails the lint: the composition root only composes', async (t) => {
  const code = Array.from({ length: 161 }, (_, i) => `export const line${i} = ${i};`).join('\n') + '\n';
  t.same(await rulesBroken(code, 'src/server.ts'), ['max-lines']);
  t.same(await rulesBroken(code, 'src/cli/probe.ts'), [], 'other files are not held to it');
});

t.test("a function over 80 lines in src/changes/ fails the lint: the resolver's functions do one thing each", async (t) => {
  const functionOf = (lines: number): string =>
    `export function probe(): number {\n  let n = 0;\n${'  n += 1;\n'.repeat(lines - 4)}  return n;\n}\n`;
  t.same(await rulesBroken(functionOf(81), 'src/changes/probe.ts'), ['max-lines-per-function']);
  t.same(await rulesBroken(functionOf(80), 'src/changes/probe.ts'), [], '80 lines it may');
  t.same(await rulesBroken(functionOf(81), 'src/cli/probe.ts'), [], 'other folders are not held to it');
});

t.test('a value imported from a package of src/commonjs/ outside that folder fails the lint; its types may be', async (t) => {
  for (const [name, value] of [
    ['bullmq', 'Worker'],
    ['ioredis', 'Redis'],
    ['fastify', 'LogController'],
    ['pg', 'Pool'],
    ['pg-copy-streams', 'from'],
    ['nats', 'connect'],
    ['amqplib', 'connect'],
    ['undici', 'Agent'],
    ['pino-pretty', 'PinoPretty'],
  ] as const) {
    t.same(
      await rulesBroken(`export { ${value} } from '${name}';\n`, 'src/queue/probe.ts'),
      ['@typescript-eslint/no-restricted-imports'],
      name,
    );
    t.same(await rulesBroken(`export type { ${value} } from '${name}';\n`, 'src/queue/probe.ts'), [], `${name}: a type`);
  }
  t.same(await rulesBroken("import jsonata from 'jsonata';\nexport const compile = jsonata;\n", 'src/relay/probe.ts'), [
    '@typescript-eslint/no-restricted-imports',
  ]);
  t.same(
    await rulesBroken("import { type Job } from 'bullmq';\nexport type Jobs = Job[];\n", 'src/queue/probe.ts'),
    ['@typescript-eslint/no-import-type-side-effects'],
    '`import { type … }` would load the package: `import type` does not',
  );
  t.same(
    await rulesBroken(
      "import { bullmq } from '../commonjs/bullmq.js';\nexport const queue = new bullmq.Queue('events');\n",
      'src/queue/probe.ts',
    ),
    ['no-restricted-syntax'],
    "a Queue is made by openQueue(), through the package's object too",
  );
});

t.test('an import cycle fails the lint', async (t) => {
  const dir = mkdtempSync(join(root, 'src', 'arcgis', 'lint-probe-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'a.ts'), "import { b } from './b.js';\n\nexport const a = (): number => b() + 1;\n");
  writeFileSync(join(dir, 'b.ts'), "import { a } from './a.js';\n\nexport const b = (): number => a() - 1;\n");
  const results = await eslint.lintFiles([join(dir, 'a.ts'), join(dir, 'b.ts')]);
  t.same(
    results.map((result) => result.messages.map((message) => message.ruleId)),
    [['import-x/no-cycle'], ['import-x/no-cycle']],
  );
});

t.test('every folder of src/ has its layer rule: importing the command line from any of them fails the lint', async (t) => {
  const folders = readdirSync(join(root, 'src'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && entry.name !== 'cli')
    .map((entry) => entry.name);
  t.ok(folders.length > 10);
  for (const folder of folders)
    t.ok(
      (await rulesBroken("export { printLine } from '../cli/print.js';\n", `src/${folder}/probe.ts`)).includes(
        'import-x/no-restricted-paths',
      ),
      folder,
    );
});
