import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

/**
 * The layers of `src/`: what each folder may import besides itself, `errors.ts`, `logger.ts` and `commonjs/`. A folder
 * importing one it does not list fails the lint (docs/development.md explains the layers).
 */
const layers = {
  commonjs: [],
  arcgis: [],
  config: ['arcgis'],
  embedded: [],
  retry: [],
  redis: ['config'],
  signature: ['arcgis', 'config', 'redis'],
  'arcgis-request': ['arcgis'],
  events: ['arcgis'],
  queue: ['arcgis', 'config', 'events', 'redis'],
  receiver: ['arcgis', 'config', 'events', 'queue', 'redis', 'signature'],
  admin: ['arcgis', 'arcgis-request'],
  consumers: ['arcgis', 'arcgis-request', 'changes', 'config', 'embedded', 'events', 'fanout', 'queue', 'redis'],
  registration: ['admin', 'arcgis', 'config', 'redis', 'retry', 'signature'],
  backfill: ['arcgis', 'arcgis-request', 'events', 'queue', 'redis'],
  health: ['admin', 'arcgis', 'queue', 'redis', 'registration'],
  changes: ['arcgis', 'arcgis-request', 'config', 'events', 'health', 'queue', 'redis', 'retry'],
  mirror: ['arcgis', 'arcgis-request', 'changes', 'events', 'redis', 'retry'],
  fanout: ['arcgis', 'changes', 'config', 'events', 'queue', 'redis'],
  subscriptions: ['config', 'fanout', 'health', 'queue', 'redis'],
  relay: ['arcgis', 'changes', 'config', 'events', 'fanout', 'health', 'queue', 'redis', 'signature'],
  streams: ['arcgis', 'config', 'events', 'fanout', 'queue', 'redis', 'relay'],
  attachments: ['arcgis', 'arcgis-request', 'config', 'redis', 'signature'],
  dashboard: ['changes', 'config', 'events', 'mirror', 'queue', 'receiver', 'redis', 'relay', 'signature', 'subscriptions'],
  doctor: ['admin', 'arcgis', 'arcgis-request', 'signature'],
  background: [
    'arcgis',
    'backfill',
    'changes',
    'config',
    'fanout',
    'health',
    'mirror',
    'queue',
    'redis',
    'registration',
    'relay',
    'signature',
    'streams',
    'subscriptions',
  ],
  emulator: ['arcgis', 'config', 'signature'],
  cli: [
    'admin',
    'arcgis',
    'arcgis-request',
    'backfill',
    'changes',
    'config',
    'consumers',
    'doctor',
    'embedded',
    'emulator',
    'events',
    'fanout',
    'mirror',
    'queue',
    'redis',
    'registration',
    'relay',
    'signature',
    'subscriptions',
    'server.ts',
  ],
};
/** The composition roots at the top of `src/`, which only `cli/` (and they themselves) may import. */
const roots = ['server.ts', 'app.ts', 'index.ts', 'internal.ts', 'cli.ts'];
/** What every folder may import: the CommonJS packages loaded with `require` (src/commonjs/). */
const shared = ['commonjs'];
const everything = [...Object.keys(layers), ...roots].filter((folder) => !shared.includes(folder));

const layerZones = Object.entries(layers).map(([folder, allowed]) => ({
  target: `./src/${folder}`,
  from: everything.filter((other) => other !== folder && !allowed.includes(other)).map((other) => `./src/${other}`),
  message: `src/${folder}/ may import only ${allowed.length === 0 ? 'errors.ts and logger.ts' : allowed.join(', ')} (see the layers in eslint.config.js)`,
}));

export default tseslint.config(
  { ignores: ['dist/', 'dist-harness/', 'dist-test/', 'coverage/', '.tap/', 'bench-profiles/', 'test-artifacts/', '.geohook/'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  importX.flatConfigs.recommended,
  importX.flatConfigs.typescript,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module', globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
    settings: { 'import-x/resolver-next': [createTypeScriptImportResolver({ project: 'test/tsconfig.json' })] },
    rules: {
      'import-x/order': [
        'error',
        { groups: ['builtin', 'external', 'internal', 'parent', 'sibling', 'index'], alphabetize: { order: 'asc', caseInsensitive: true } },
      ],
      // The compiler checks these; the linter would only repeat the work (typescript-eslint's advice).
      'import-x/namespace': 'off',
      'import-x/default': 'off',
      // `fc.tuple`, `pino.destination`: namespaces used as their documentation shows.
      'import-x/no-named-as-default-member': 'off',
      'import-x/no-named-as-default': 'off',
      'import-x/no-self-import': 'error',
      'import-x/no-useless-path-segments': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      // `import { type A } from 'x'` compiles to `import {} from 'x'`, which still loads x: a type-only import is `import type`.
      '@typescript-eslint/no-import-type-side-effects': 'error',
    },
  },
  {
    // A cycle runs through files that import each other, and no file imports a test: the rule, the costliest of the lint
    // (it walks the import graph again from every file it checks), checks only the files others import.
    files: ['src/**/*.ts', 'harness/**/*.ts', 'test/helpers/**/*.ts', 'examples/**/*.ts'],
    rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      'import-x/no-restricted-paths': ['error', { zones: layerZones }],
      'no-console': 'error',
    },
  },
  {
    // A BullMQ Queue without an error listener prints every failed reconnect's stack on stderr.
    files: ['src/**/*.ts'],
    ignores: ['src/queue/open-queue.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "NewExpression:matches([callee.name='Queue'], [callee.property.name='Queue'])",
          message: 'openQueue() of src/queue/open-queue.ts: a Queue that leaves connection errors to the connection',
        },
      ],
    },
  },
  {
    // CommonJS packages whose ESM import costs each process's start a scan of their every file: their values come
    // through src/commonjs/, with `require`; `import type` loads nothing and stays.
    files: ['src/**/*.ts'],
    ignores: ['src/commonjs/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            ...['bullmq', 'ioredis', 'fastify', 'jsonata'].map((name) => ({
              name,
              allowTypeImports: true,
              message: `its values come from src/commonjs/${name}.ts, loaded with require (docs/performance.md#start-up)`,
            })),
            // What only some configurations use: loaded at first use, so that a process without it never pays for it.
            ...['pg', 'pg-copy-streams', 'nats', 'amqplib', 'undici', 'pino-pretty'].map((name) => ({
              name,
              allowTypeImports: true,
              message: `its values come from src/commonjs/${name}.ts, loaded at first use (docs/performance.md#start-up)`,
            })),
          ],
        },
      ],
    },
  },
  {
    // The emulator is a separate entry of the package: the CLI reaches it as users do, through `geohook/emulator`.
    files: ['src/**/*.ts'],
    ignores: ['src/emulator/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [{ regex: '^\\.{1,2}/(.+/)?emulator(/|$)', message: "import the emulator from 'geohook/emulator', its package entry" }],
        },
      ],
    },
  },
  {
    // The resolver's functions each do one thing and fit on a screen (issue 52).
    files: ['src/changes/**/*.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true, IIFEs: true }] },
  },
  {
    // The composition root only composes: what it starts lives in the folders (background/, receiver/, dashboard/, embedded/).
    files: ['src/server.ts'],
    rules: { 'max-lines': ['error', { max: 160, skipBlankLines: false, skipComments: false }] },
  },
  prettier,
);
