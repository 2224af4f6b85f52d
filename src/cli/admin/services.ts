import type { Command } from 'commander';
import { GeohookError } from '../../errors.js';
import { printResult } from '../print.js';
import { adminClientFrom, flagsOf, readJsonFile } from './flags.js';

/** `geohook admin find` and `update-definition`: the services of the server. */
export function registerAdminServices(admin: Command): void {
  admin
    .command('find')
    .description('findServices, with any filter')
    .option('--folder <name>', 'filterFolderName')
    .option('--name <name>', 'filterServiceName')
    .option('--type <type>', 'filterServiceType')
    .option('--id <ids>', 'filterServiceId')
    .option('--provider <provider>', 'filterServiceProvider')
    .action(async (_options: unknown, command: Command) => {
      const flags = flagsOf(command);
      const filters: Record<string, string> = {};
      for (const [flag, filter] of [
        ['folder', 'folderName'],
        ['name', 'serviceName'],
        ['type', 'serviceType'],
        ['id', 'serviceId'],
        ['provider', 'provider'],
      ] as const) {
        if (typeof flags[flag] === 'string') filters[filter] = flags[flag] as string;
      }
      printResult(await (await adminClientFrom(flags)).findServices(filters), flags, [
        'id',
        'folderName',
        'serviceName',
        'type',
        'provider',
        'configuredState',
      ]);
    });

  admin
    .command('update-definition')
    .description("change a feature service's definition (capabilities, change tracking, sync)")
    .argument('<service>', 'folder/name.FeatureServer')
    .option('--file <definition.json>', 'the definition keys as JSON')
    .option('--capabilities <list>', 'e.g. Create,Delete,Query,Update,Editing,ChangeTracking')
    .option('--sync-enabled <true|false>', 'syncEnabled')
    .action(async (service: string, _options: unknown, command: Command) => {
      const flags = flagsOf(command);
      const definition = (flags.file === undefined ? {} : await readJsonFile(flags.file as string, '--file')) as Record<string, unknown>;
      if (flags.capabilities !== undefined) definition.capabilities = flags.capabilities;
      if (flags.syncEnabled !== undefined) {
        if (flags.syncEnabled !== 'true' && flags.syncEnabled !== 'false')
          throw new GeohookError('GEOHOOK_ERR_CONFIG', '--sync-enabled: true or false');
        definition.syncEnabled = flags.syncEnabled === 'true';
      }
      await (await adminClientFrom(flags)).updateDefinition(service, definition);
      printResult({ status: 'success' }, flags);
    });
}
