import type { Command } from 'commander';
import { readChangesStatus } from '../changes/changes-status.js';
import { loadConfig } from '../config/load-config.js';
import { addQueueOptions, configOverrides } from './config-options.js';
import { printJson, printLine, printTable } from './print.js';
import { connectQueueRedis } from './queue-redis-target.js';

interface ChangesFlags {
  redisUrl?: string;
  prefix?: string;
  config?: string;
  json?: boolean;
}

/** `geohook changes …`: where change events stand (docs/changes.md). */
export function registerChanges(changes: Command): void {
  addQueueOptions(changes);
  changes
    .command('status')
    .description(
      'per followed service: the generation resolved to, the watermark, the range being resolved, the last failure, the previous values kept',
    )
    .option('--json', 'print one JSON object')
    .action(async (_options: unknown, command: Command) => {
      const flags = command.optsWithGlobals<ChangesFlags>();
      const config = loadConfig(process.env, configOverrides({ redisUrl: flags.redisUrl, prefix: flags.prefix, config: flags.config }));
      const { connection } = await connectQueueRedis(config);
      try {
        const status = await readChangesStatus(connection, config.prefix);
        if (flags.json === true) return printJson(status);
        printTable(
          status.services.flatMap(({ service, previousValues, scopes }) =>
            scopes.map((scope) => ({
              service,
              scope: scope.scope.slice(scope.scope.indexOf(' ') + 1),
              resolvedGen: scope.resolvedGen,
              behind: scope.watermark === undefined ? '' : Math.max(0, scope.watermark - scope.resolvedGen),
              pending: scope.pending?.join('..') ?? '',
              lastError: scope.lastError?.error ?? '',
              previousValues,
            })),
          ),
        );
        printLine('');
        printTable(status.queue);
      } finally {
        connection.disconnect();
      }
    });
}
