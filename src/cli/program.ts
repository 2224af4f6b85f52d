import { createRequire } from 'node:module';
import { Command } from 'commander';

/** One `geohook` command: its name and summary, and the module that defines its options and action. */
interface CommandEntry {
  name: string;
  description: string;
  load(): Promise<(command: Command) => void>;
}

/**
 * Every command. The binary loads only the module of the command that runs, so that `--help`, `sign` and `send`
 * start without loading Fastify, BullMQ and the emulator; the command modules import what they use statically.
 */
const commands: readonly CommandEntry[] = [
  {
    name: 'up',
    description:
      'run everything on one machine: embedded Redis (REDIS_URL unset), the emulator (ADMIN_URL unset), the registered receiver, and a consumer printing events',
    load: async () => (await import('./up.js')).registerUp,
  },
  {
    name: 'serve',
    description: 'run the receiver (an embedded redis-server is started when REDIS_URL is unset)',
    load: async () => (await import('./serve.js')).registerServe,
  },
  {
    name: 'emulator',
    description: 'serve the GIS admin API (webhooks, settings, placement, findServices, updateDefinition) with a real delivery engine',
    load: async () => (await import('./emulator.js')).registerEmulator,
  },
  {
    name: 'consume',
    description:
      'consume events and print each one as a JSON line on stdout (patterns: "*", "gp.*", "feature.FeaturesCreated", "change.*", "unknown")',
    load: async () => (await import('./consume.js')).registerConsume,
  },
  {
    name: 'sign',
    description: 'print the signature header value (sha256=<base64 HMAC-SHA256>) for the bytes of FILE or stdin',
    load: async () => (await import('./sign.js')).registerSign,
  },
  {
    name: 'send',
    description: 'POST the bytes of FILE (or stdin) to URL as the GIS server delivers, signed when a key is given',
    load: async () => (await import('./send.js')).registerSend,
  },
  {
    name: 'admin',
    description: 'drive the GIS admin API: webhooks, settings, placement policy, findServices, updateDefinition, tokens',
    load: async () => (await import('./admin/index.js')).registerAdmin,
  },
  {
    name: 'config',
    description: "check the configuration, and every relay route's and subscription's filter against the layers it reads (config check)",
    load: async () => (await import('./config.js')).registerConfig,
  },
  {
    name: 'doctor',
    description: "say why a service's webhooks would not fire, with the exact fix, and prove a live delivery round trip",
    load: async () => (await import('./doctor.js')).registerDoctor,
  },
  {
    name: 'changes',
    description: 'change events: where each followed service stands (resolved generation, pending range, last failure)',
    load: async () => (await import('./changes.js')).registerChanges,
  },
  {
    name: 'relay',
    description: 'relay routes: delivered, failing, dead letters (status), and dead letters sent again (replay)',
    load: async () => (await import('./relay.js')).registerRelay,
  },
  {
    name: 'subscriptions',
    description: 'named readers that each get every event they take: create, delete, list',
    load: async () => (await import('./subscriptions.js')).registerSubscriptions,
  },
  {
    name: 'mirror',
    description: 'the PostGIS mirror: where each mirrored table stands (rows, generation, lag, last failure)',
    load: async () => (await import('./mirror.js')).registerMirror,
  },
  {
    name: 'events',
    description: 'inspect the queues: job counts, dead letters (failed jobs), retry them, replay an event',
    load: async () => (await import('./events.js')).registerEvents,
  },
];

// By the package's own name, so that the path holds wherever this file is compiled to.
const { version } = createRequire(import.meta.url)('geohook/package.json') as { version: string };

/**
 * The `geohook` program with every command listed. The commands for which `load` answers true (all of
 * them unless told) get their options and action; the others show only in the listing.
 */
export async function buildProgram(load: (name: string) => boolean = () => true): Promise<Command> {
  const program = new Command('geohook')
    .description('Receive GIS service webhooks reliably: verify, classify, durably enqueue to BullMQ')
    .version(version);
  for (const entry of commands) {
    const command = program.command(entry.name).description(entry.description);
    if (load(entry.name)) (await entry.load())(command);
  }
  return program;
}
