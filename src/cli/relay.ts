import type { Command } from 'commander';
import { ConfigError, GeohookError } from '../errors.js';
import { replayDeadLetters } from '../relay/relay-replay.js';
import { readRelayStatus } from '../relay/relay-status.js';
import { addQueueOptions, queueCommandConfig, queueConfigFile } from './config-options.js';
import { printJson, printTable } from './print.js';
import { connectQueueRedis } from './queue-redis-target.js';

interface RelayFlags {
  redisUrl?: string;
  prefix?: string;
  config?: string;
  json?: boolean;
  name?: string;
  id?: string[];
}

/** `geohook relay …`: where the relay routes stand, and their dead letters replayed (docs/relays.md). */
export function registerRelay(relay: Command): void {
  addQueueOptions(relay);
  relay
    .command('status')
    .description('per relay route: tries delivered, failed tries in a row, dead letters, events pending, the last error')
    .option('--json', 'print one JSON object')
    .action(async (_options: unknown, command: Command) => {
      const flags = command.optsWithGlobals<RelayFlags>();
      const config = queueCommandConfig(flags);
      if (config.relays.length === 0) {
        const file = queueConfigFile(flags);
        throw new ConfigError(
          file === undefined
            ? 'relay status: no relay routes read: pass --config FILE (or set GEOHOOK_CONFIG) with its relays, or run it in the folder of the geohook up that has them'
            : `relay status: ${file} has no relays: the routes are its "relays" list (docs/relays.md)`,
        );
      }
      const { connection } = await connectQueueRedis(config);
      try {
        const status = await readRelayStatus(connection, config.prefix, config.relays);
        if (flags.json === true) return printJson(status);
        printTable(status.routes.map((route) => ({ ...route, lastError: route.lastError ?? '' })));
      } finally {
        connection.disconnect();
      }
    });

  relay
    .command('replay')
    .description("send a route's dead letters again, with every try of its schedule (all of them, or those of --id)")
    .requiredOption('--name <route>', 'the relay route')
    .option('--id <event id>', 'an event id (repeatable); none: every dead letter of the route', (id: string, ids: string[] = []) => [
      ...ids,
      id,
    ])
    .action(async (_options: unknown, command: Command) => {
      const flags = command.optsWithGlobals<RelayFlags>();
      const config = queueCommandConfig(flags);
      const name = flags.name!;
      if (!config.relays.some((route) => route.name === name))
        throw new GeohookError('GEOHOOK_ERR_RELAY_UNKNOWN_ROUTE', `relay replay: no route "${name}" in GEOHOOK_CONFIG's relays`);
      const { connection } = await connectQueueRedis(config);
      try {
        const replayed = await replayDeadLetters(connection, config.prefix, name, flags.id ?? []);
        printJson({ route: name, replayed: replayed.length, ids: replayed });
      } finally {
        connection.disconnect();
      }
    });
}
