import type { Command } from 'commander';
import { ConfigError, GeohookError } from '../errors.js';
import type { RoutedEvent } from '../fanout/routed-event.js';
import { dryRunRelay, isRoutedEvent, RelayDryRunner, relayRouteNamed, type RelayDryRun } from '../relay/dry-run.js';
import { replayDeadLetters } from '../relay/relay-replay.js';
import { readRelayStatus } from '../relay/relay-status.js';
import { addQueueOptions, queueCommandConfig, queueConfigFile } from './config-options.js';
import { printError, printJson, printLine, printTable } from './print.js';
import { connectQueueRedis } from './queue-redis-target.js';
import { readInput } from './read-input.js';

interface RelayFlags {
  redisUrl?: string;
  prefix?: string;
  config?: string;
  json?: boolean;
  name?: string;
  id?: string[];
}

interface RelayTestFlags extends Omit<RelayFlags, 'id'> {
  route: string;
  id?: string;
  file?: string;
}

/** The event of `--file` (`-`: stdin): one JSON event, as the queues hold it or as consumers get it. */
async function readEventFile(file: string): Promise<RoutedEvent> {
  const fail = (why: string) =>
    new GeohookError('GEOHOOK_ERR_RELAY_TEST_INPUT', `relay test --file ${file}: ${why}; give the JSON of one geohook event`);
  let text: string;
  try {
    text = (await readInput(file)).toString('utf8');
  } catch (err) {
    throw fail(`cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  let event: unknown;
  try {
    event = JSON.parse(text);
  } catch (err) {
    throw fail(`not JSON (${(err as Error).message})`);
  }
  if (!isRoutedEvent(event)) throw fail('no event: a change event has id, type, service and layer; a stored event id, type and family');
  return event;
}

/** A dry run as a person reads it: the verdict and why, the headers, then the body (or the transform's error). */
function printDryRun(result: RelayDryRun): void {
  printLine(`route ${result.route}, event ${result.event.id} (${result.event.type}): ${result.why}`);
  if (result.error !== undefined) return printError(result.error);
  printLine('headers:');
  for (const [name, value] of Object.entries(result.headers)) printLine(`  ${name}: ${value}`);
  printLine('body:');
  // As printJson: DEL and the C1 controls escaped, nothing a terminal obeys.
  printLine(JSON.stringify(result.body, null, 2).replace(/[\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
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
    .command('test')
    .description('what a route would do with an event, without sending it: whether its filter takes it and why, the body and the headers')
    .requiredOption('--route <route>', 'the relay route')
    .option('--id <event id>', "an event kept in the route's queue, change-events or the event queues")
    .option('--file <file>', 'the JSON of an event ("-": stdin)')
    .option('--json', 'print one JSON object: {"matches","why","body","headers",…}')
    .action(async (_options: unknown, command: Command) => {
      const flags = command.optsWithGlobals<RelayTestFlags>();
      if ((flags.id === undefined) === (flags.file === undefined))
        throw new GeohookError('GEOHOOK_ERR_RELAY_TEST_INPUT', 'relay test: give the event with --id ID or with --file F, one of them');
      const config = queueCommandConfig(flags);
      const event = flags.file === undefined ? undefined : await readEventFile(flags.file);
      const route = relayRouteNamed(config.relays, flags.route);
      let result: RelayDryRun;
      // An event from a file needs Redis only for the fields of its layer, which a `where` reads.
      if (event !== undefined && route.where === undefined) result = await dryRunRelay(route, event);
      else {
        const { connection } = await connectQueueRedis(config);
        try {
          result = await new RelayDryRunner(connection, config.prefix, config.relays).run(route.name, event ?? { id: flags.id! });
        } finally {
          connection.disconnect();
        }
      }
      if (flags.json === true) printJson(result);
      else printDryRun(result);
      if (result.error !== undefined) process.exitCode = 1;
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
