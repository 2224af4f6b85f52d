import type { Command } from 'commander';
import type { CreateWebhookParams } from '../../arcgis/webhook.js';
import { printResult } from '../print.js';
import { adminClientFrom, type AdminFlags } from './flags.js';

const WEBHOOK_COLUMNS = ['id', 'folderName', 'serviceName', 'name', 'active', 'hookUrl', 'changeTypes'] as const;

interface WebhookFlags {
  name?: string;
  hookUrl?: string;
  changeTypes?: string;
  signatureKey?: string;
  active?: boolean;
  contentType?: CreateWebhookParams['contentType'];
  payloadFormat?: CreateWebhookParams['payloadFormat'];
  scheduleInfo?: string;
}

function webhookParams(flags: WebhookFlags): Partial<CreateWebhookParams> {
  const params: Partial<CreateWebhookParams> = {};
  if (flags.name !== undefined) params.name = flags.name;
  if (flags.hookUrl !== undefined) params.hookUrl = flags.hookUrl;
  if (flags.changeTypes !== undefined) params.changeTypes = flags.changeTypes.split(',').map((type) => type.trim());
  if (flags.signatureKey !== undefined) params.signatureKey = flags.signatureKey;
  if (flags.active !== undefined) params.active = flags.active;
  if (flags.contentType !== undefined) params.contentType = flags.contentType;
  if (flags.payloadFormat !== undefined) params.payloadFormat = flags.payloadFormat;
  if (flags.scheduleInfo !== undefined) params.scheduleInfo = JSON.parse(flags.scheduleInfo) as object;
  return params;
}

function webhookOptions(command: Command): Command {
  return command
    .option('--name <name>', 'webhook name')
    .option('--hook-url <url>', 'payload URL')
    .option('--change-types <list>', 'feature-service triggers, comma-separated (default *)')
    .option('--signature-key <key>', 'key the deliveries are signed with')
    .option('--active', 'deliver at once')
    .option('--no-active', 'create or set it inactive')
    .option('--content-type <type>', 'application/json or application/x-www-form-urlencoded')
    .option('--payload-format <format>', 'json or pjson')
    .option('--schedule-info <json>', 'feature services: the scheduleInfo object');
}

/** The webhook operations of `geohook admin`. */
export function registerAdminWebhooks(admin: Command): void {
  const run =
    (action: (flags: AdminFlags & WebhookFlags, ...args: string[]) => Promise<unknown>, columns?: readonly string[]) =>
    async (...args: unknown[]) => {
      const command = args[args.length - 1] as Command;
      const flags = command.optsWithGlobals<AdminFlags & WebhookFlags>();
      const result = await action(flags, ...(args.slice(0, -2) as string[]));
      printResult(result ?? { status: 'success' }, flags, columns);
    };

  webhookOptions(
    admin.command('create').description('create a webhook on a service').argument('<service>', 'folder/name.Type or name.Type'),
  ).action(
    run(async (flags, service) => {
      const params = webhookParams(flags);
      return (await adminClientFrom(flags)).webhooks.create(service!, {
        name: params.name ?? '',
        hookUrl: params.hookUrl ?? '',
        ...params,
      });
    }),
  );
  webhookOptions(admin.command('edit').description('change a webhook').argument('<service>').argument('<id>')).action(
    run(async (flags, service, id) => (await adminClientFrom(flags)).webhooks.edit(service!, id!, webhookParams(flags))),
  );
  admin
    .command('list')
    .description("a service's webhooks (every page)")
    .argument('<service>')
    .action(run(async (flags, service) => (await adminClientFrom(flags)).webhooks.listAll(service!), WEBHOOK_COLUMNS));
  admin
    .command('list-all')
    .description('every webhook of the organisation')
    .action(run(async (flags) => (await adminClientFrom(flags)).webhooks.listOrganization(), WEBHOOK_COLUMNS));
  admin
    .command('get')
    .description('one webhook')
    .argument('<service>')
    .argument('<id>')
    .action(run(async (flags, service, id) => (await adminClientFrom(flags)).webhooks.get(service!, id!)));
  admin
    .command('delete')
    .description('delete a webhook')
    .argument('<service>')
    .argument('<id>')
    .action(run(async (flags, service, id) => (await adminClientFrom(flags)).webhooks.delete(service!, id!)));
  admin
    .command('notification-status')
    .description('failed deliveries of a webhook')
    .argument('<service>')
    .argument('<id>')
    .action(run(async (flags, service, id) => (await adminClientFrom(flags)).webhooks.notificationStatus(service!, id!)));
  for (const [name, description, operation] of [
    ['activate-all', "reactivate a service's webhooks", 'activateAll'],
    ['deactivate-all', "deactivate a service's webhooks", 'deactivateAll'],
    ['delete-all', "delete a service's webhooks", 'deleteAll'],
  ] as const) {
    admin
      .command(name)
      .description(description)
      .argument('<service>')
      .action(run(async (flags, service) => (await adminClientFrom(flags)).webhooks[operation](service!)));
  }
}
