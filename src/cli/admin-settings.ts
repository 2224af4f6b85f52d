import { Option, type Command } from 'commander';
import type { ServicePlacementPolicy } from '../admin/placement-policy.js';
import type { WebhookSettings } from '../emulator/types.js';
import { GeohookError } from '../errors.js';
import { adminClientFrom, adminOverrides, integer, readJsonFile, type AdminFlags } from './admin.js';
import { printResult } from './print.js';

type Flags = AdminFlags & Record<string, unknown>;

const settingFlags: [flag: string, field: keyof WebhookSettings][] = [
  ['--notification-attempts <n>', 'notificationAttempts'],
  ['--notification-timeout <seconds>', 'notificationTimeOutInSeconds'],
  ['--notification-interval <seconds>', 'notificationElapsedTimeInSeconds'],
  ['--number-of-failures <n>', 'numberOfFailures'],
  ['--days-in-past <days>', 'daysInPast'],
];

const flagsOf = (command: Command): Flags => command.optsWithGlobals<Flags>();

function parseJsonFlag(text: string, flag: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new GeohookError('GEOHOOK_ERR_CONFIG', `${flag}: not valid JSON`);
  }
}

/** settings, placement (get, edit, explain), find, update-definition and token. */
export function registerAdminSettings(admin: Command): void {
  const settings = admin
    .command('settings')
    .description('show the organisation-wide delivery settings, or change them from --file and/or flags')
    .option('--file <settings.json>', 'JSON object with any of the five settings');
  for (const [flag, field] of settingFlags) settings.addOption(new Option(flag, field).argParser(integer));
  settings.action(async (_options: unknown, command: Command) => {
    const flags = flagsOf(command);
    const changes: Partial<WebhookSettings> = flags.file === undefined ? {} : ((await readJsonFile(flags.file as string, '--file')) as Partial<WebhookSettings>);
    for (const [, field] of settingFlags) if (flags[field] !== undefined) changes[field] = flags[field] as number;
    const client = await adminClientFrom(flags);
    printResult(Object.keys(changes).length === 0 ? await client.settings.get() : await client.settings.set(changes), flags);
  });

  const placement = admin.command('placement').description("a service's placement policy (node affinity and tolerations)");
  placement.command('get').argument('<service>').action(async (service: string, _options: unknown, command: Command) => {
    const flags = flagsOf(command);
    printResult(await (await adminClientFrom(flags)).placement.get(service), flags);
  });
  placement
    .command('edit')
    .argument('<service>')
    .option('--file <policy.json>', 'the servicePlacementPolicy JSON, from a file')
    .option('--policy <json>', 'the servicePlacementPolicy JSON, inline')
    .option('--async', 'run the edit asynchronously')
    .action(async (service: string, _options: unknown, command: Command) => {
      const flags = flagsOf(command);
      if ((flags.file === undefined) === (flags.policy === undefined)) throw new GeohookError('GEOHOOK_ERR_CONFIG', '--file or --policy: give exactly one');
      const policy = (flags.file === undefined ? parseJsonFlag(flags.policy as string, '--policy') : await readJsonFile(flags.file as string, '--file')) as ServicePlacementPolicy;
      await (await adminClientFrom(flags)).placement.edit(service, policy, { async: flags.async === true });
      printResult({ status: 'success' }, flags);
    });
  placement
    .command('explain')
    .description('say on which nodes the pods of each deployment may run, and why not elsewhere (no server needed)')
    .requiredOption('--file <policy.json>', 'the servicePlacementPolicy JSON')
    .requiredOption('--nodes <nodes.json>', 'JSON array of {name, labels, taints}')
    .option('--deployment <id>', 'only this deploymentId')
    .action(async (_options: unknown, command: Command) => {
      const flags = flagsOf(command);
      const [{ validatePlacementPolicy }, { explainPlacement }] = await Promise.all([import('../admin/placement-policy.js'), import('../admin/placement-explain.js')]);
      const checked = validatePlacementPolicy(await readJsonFile(flags.file as string, '--file'));
      if (!checked.ok) throw new GeohookError('GEOHOOK_ERR_CONFIG', `--file: ${checked.errors.join('; ')}`);
      const nodes = await readJsonFile(flags.nodes as string, '--nodes');
      if (!Array.isArray(nodes)) throw new GeohookError('GEOHOOK_ERR_CONFIG', '--nodes: must be a JSON array of {name, labels, taints}');
      const entries = checked.policy.placementPolicy.filter((entry) => flags.deployment === undefined || entry.deploymentId === flags.deployment);
      const verdicts = entries.flatMap((entry) =>
        explainPlacement(entry, nodes).map((verdict) => ({ deploymentId: entry.deploymentId, ...verdict, ...(flags.table ? { reasons: verdict.reasons.join('; ') } : {}) })),
      );
      printResult(verdicts, flags, ['deploymentId', 'node', 'schedulable', 'score', 'reasons']);
    });

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
      for (const [flag, filter] of [['folder', 'folderName'], ['name', 'serviceName'], ['type', 'serviceType'], ['id', 'serviceId'], ['provider', 'provider']] as const) {
        if (typeof flags[flag] === 'string') filters[filter] = flags[flag] as string;
      }
      printResult(await (await adminClientFrom(flags)).findServices(filters), flags, ['id', 'folderName', 'serviceName', 'type', 'provider', 'configuredState']);
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
        if (flags.syncEnabled !== 'true' && flags.syncEnabled !== 'false') throw new GeohookError('GEOHOOK_ERR_CONFIG', '--sync-enabled: true or false');
        definition.syncEnabled = flags.syncEnabled === 'true';
      }
      await (await adminClientFrom(flags)).updateDefinition(service, definition);
      printResult({ status: 'success' }, flags);
    });

  admin
    .command('token')
    .description('obtain a token with --username/--password (or ADMIN_USERNAME/ADMIN_PASSWORD) and print it')
    .option('--expiration <minutes>', 'token lifetime', integer)
    .action(async (_options: unknown, command: Command) => {
      const flags = flagsOf(command);
      const [{ loadConfig }, { generateToken }] = await Promise.all([import('../config/load-config.js'), import('../admin/generate-token.js')]);
      const config = loadConfig(process.env, adminOverrides(flags));
      const auth = config.admin?.auth;
      if (config.admin === undefined || auth === undefined || !('username' in auth)) {
        throw new GeohookError('GEOHOOK_ERR_CONFIG', 'ADMIN_USERNAME: required with ADMIN_PASSWORD and ADMIN_URL (or --username, --password, --admin-url)');
      }
      const issued = await generateToken({
        tokenUrl: auth.tokenUrl ?? `${config.admin.url}/generateToken`,
        username: auth.username,
        password: auth.password,
        ...(flags.expiration === undefined ? {} : { expirationMinutes: flags.expiration as number }),
      });
      printResult(issued, flags);
    });
}
