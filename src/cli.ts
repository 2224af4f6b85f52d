#!/usr/bin/env node
import { createRequire } from 'node:module';
import { Command } from 'commander';
import { printError } from './cli/print.js';
import { GeohookError } from './errors.js';

/** One `geohook` command: its name and summary, and the module that defines its options and action. */
interface CommandEntry {
  name: string;
  description: string;
  load(): Promise<(command: Command) => void>;
}

/**
 * Every command. Only the module of the command that runs is loaded, so that `--help`, `sign` and `send`
 * start without loading Fastify, BullMQ and the emulator; the command modules import what they use statically.
 */
const commands: readonly CommandEntry[] = [
  {
    name: 'up',
    description:
      'run everything on one machine: embedded Redis (REDIS_URL unset), the emulator (ADMIN_URL unset), the registered receiver, and a consumer printing events',
    load: async () => (await import('./cli/up.js')).registerUp,
  },
  {
    name: 'serve',
    description: 'run the receiver (an embedded redis-server is started when REDIS_URL is unset)',
    load: async () => (await import('./cli/serve.js')).registerServe,
  },
  {
    name: 'emulator',
    description: 'serve the GIS admin API (webhooks, settings, placement, findServices, updateDefinition) with a real delivery engine',
    load: async () => (await import('./cli/emulator.js')).registerEmulator,
  },
  {
    name: 'consume',
    description: 'consume events and print each one as a JSON line on stdout (patterns: "*", "gp.*", "feature.FeaturesCreated", "unknown")',
    load: async () => (await import('./cli/consume.js')).registerConsume,
  },
  {
    name: 'sign',
    description: 'print the signature header value (sha256=<base64 HMAC-SHA256>) for the bytes of FILE or stdin',
    load: async () => (await import('./cli/sign.js')).registerSign,
  },
  {
    name: 'send',
    description: 'POST the bytes of FILE (or stdin) to URL as the GIS server delivers, signed when a key is given',
    load: async () => (await import('./cli/send.js')).registerSend,
  },
  {
    name: 'admin',
    description: 'drive the GIS admin API: webhooks, settings, placement policy, findServices, updateDefinition, tokens',
    load: async () => (await import('./cli/admin/index.js')).registerAdmin,
  },
  {
    name: 'events',
    description: 'inspect the queues: job counts, dead letters (failed jobs), retry them, replay an event',
    load: async () => (await import('./cli/events.js')).registerEvents,
  },
];

/** The command the arguments name (`geohook help <command>` included), if any. */
function invokedCommand(args: readonly string[]): string | undefined {
  const words = args.filter((arg) => !arg.startsWith('-'));
  return words[0] === 'help' ? words[1] : words[0];
}

const { version } = createRequire(import.meta.url)('../package.json') as { version: string };
const program = new Command('geohook')
  .description('Receive GIS service webhooks reliably: verify, classify, durably enqueue to BullMQ')
  .version(version);

try {
  const invoked = invokedCommand(process.argv.slice(2));
  for (const entry of commands) {
    const command = program.command(entry.name).description(entry.description);
    if (entry.name === invoked) (await entry.load())(command);
  }
  await program.parseAsync();
} catch (err) {
  printError(err instanceof GeohookError ? err.message : `unexpected error: ${(err as Error).stack ?? String(err)}`);
  process.exitCode = 1;
}
