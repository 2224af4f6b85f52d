import type { Command } from 'commander';
import type { GeohookConfig } from '../config/load-config.js';
import { whereClause } from '../config/schema.js';
import { subscriptionSchema, type SubscriptionConfig } from '../config/subscription-schema.js';
import { ConfigError, GeohookError } from '../errors.js';
import { checkConfiguredFilters, filtersError } from '../fanout/configured-filters.js';
import { subscriptionQueueName } from '../queue/names.js';
import { SubscriptionRegistry } from '../subscriptions/subscription-registry.js';
import { readSubscriptionStatus } from '../subscriptions/subscription-status.js';
import { addQueueOptions, queueCommandConfig } from './config-options.js';
import { printJson, printNotice, printTable } from './print.js';
import { connectQueueRedis } from './queue-redis-target.js';

interface SubscriptionFlags {
  redisUrl?: string;
  prefix?: string;
  config?: string;
  json?: boolean;
  types?: string;
  services?: string;
  layers?: string;
  where?: string;
  changed?: string;
  from?: string;
  backlogCount?: string;
  backlogAgeSeconds?: string;
}

const list = (value: string | undefined): string[] | undefined =>
  value
    ?.split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');

/** The subscription the flags describe, checked as GEOHOOK_CONFIG's are: one line naming the flag and the fix when not. */
function subscriptionOf(name: string, flags: SubscriptionFlags): SubscriptionConfig {
  const number = (value: string | undefined): number | undefined => (value === undefined ? undefined : Number(value));
  const backlog = { count: number(flags.backlogCount), ageSeconds: number(flags.backlogAgeSeconds) };
  const candidate = {
    name,
    types: list(flags.types) ?? [],
    ...(flags.services === undefined ? {} : { services: list(flags.services) }),
    ...(flags.layers === undefined ? {} : { layers: list(flags.layers)!.map(Number) }),
    ...(flags.where === undefined ? {} : { where: flags.where }),
    ...(flags.changed === undefined ? {} : { changed: list(flags.changed) }),
    ...(backlog.count === undefined && backlog.ageSeconds === undefined
      ? {}
      : { backlog: Object.fromEntries(Object.entries(backlog).filter(([, value]) => value !== undefined)) }),
  };
  const parsed = subscriptionSchema(whereClause).safeParse(candidate);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const flag = { name: 'NAME', types: '--types', backlog: '--backlog-*' }[String(issue.path[0])] ?? `--${String(issue.path[0])}`;
    throw new ConfigError(
      `subscriptions create: ${flag}${issue.path.length > 1 ? ` (${issue.path.slice(1).join('.')})` : ''}: ${issue.message}`,
    );
  }
  return parsed.data;
}

/**
 * The new subscription's filter checked against the followed layers, as start-up checks those of GEOHOOK_CONFIG
 * (docs/relays.md#filters), when ADMIN_URL says where they are; one that cannot match is not made.
 */
async function checkAdded(config: GeohookConfig, subscription: SubscriptionConfig): Promise<void> {
  if (config.admin === undefined) return;
  const { issues, unread } = await checkConfiguredFilters({ ...config, relays: [], subscriptions: [subscription] });
  for (const { service, error } of unread)
    printNotice(`geohook: ${service}: its layer definitions could not be read, so the filter is not checked: ${error.message}`);
  if (issues.length > 0) throw filtersError(issues);
}

/** `--from`: an ISO 8601 time, not in the future. */
function fromOf(value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const from = new Date(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(from.getTime()) || from.getTime() > Date.now())
    throw new ConfigError(
      `subscriptions create: --from "${value}": an ISO 8601 time in the past, e.g. ${new Date(Date.now() - 86_400_000).toISOString()}`,
    );
  return from;
}

/** Runs `use` with the registry on a connection to the queues' Redis, closed afterwards. */
async function withRegistry<T>(
  flags: SubscriptionFlags,
  use: (registry: SubscriptionRegistry, config: GeohookConfig) => Promise<T>,
): Promise<T> {
  const config = queueCommandConfig(flags);
  const { connection } = await connectQueueRedis(config);
  try {
    return await use(new SubscriptionRegistry(connection, config.prefix), config);
  } finally {
    connection.disconnect();
  }
}

/** `geohook subscriptions …`: named readers that each get every event they take (docs/subscriptions.md). */
export function registerSubscriptions(subscriptions: Command): void {
  addQueueOptions(subscriptions);
  subscriptions
    .command('create')
    .description('make a subscription: it gets every event of its types stored from now on (or --from a time the event log still holds)')
    .argument('<name>', 'lower-case letters, digits and "-"; its queue is sub-<name>')
    .requiredOption('--types <patterns>', 'event type patterns, comma-separated: change.*, feature.*, gp.job.succeeded…')
    .option('--services <names>', 'only events of these services, comma-separated folder/name.Type')
    .option('--layers <ids>', 'only change events of these layers (with --services), comma-separated')
    .option('--where <clause>', 'only change events whose row matches, e.g. "status = \'Open\'"')
    .option('--changed <fields>', 'only updates of these fields, comma-separated')
    .option('--from <time>', 'also the events stored since this ISO 8601 time that the event log still holds')
    .option('--backlog-count <n>', 'most events waiting before the oldest are dropped (default: subscriptionBacklog.count)')
    .option('--backlog-age-seconds <n>', 'longest an event waits before it is dropped (default: subscriptionBacklog.ageSeconds)')
    .action(async (name: string, _options: unknown, command: Command) => {
      const flags = command.optsWithGlobals<SubscriptionFlags>();
      const subscription = subscriptionOf(name, flags);
      const from = fromOf(flags.from);
      await withRegistry(flags, async (registry, config) => {
        await checkAdded(config, subscription);
        const outcome = await registry.create(subscription, { origin: 'runtime', ...(from === undefined ? {} : { from }) });
        if (outcome === 'exists')
          throw new GeohookError(
            'GEOHOOK_ERR_SUBSCRIPTION_EXISTS',
            `subscriptions create: "${name}" exists: delete it first, or choose another name`,
          );
        printJson({
          subscription: name,
          created: true,
          queue: subscriptionQueueName(name),
          ...(from === undefined ? {} : { from: from.toISOString() }),
        });
      });
    });

  subscriptions
    .command('delete')
    .description('delete a subscription and its queue (the events waiting in it and its dead letters)')
    .argument('<name>', 'the subscription')
    .action(async (name: string, _options: unknown, command: Command) => {
      const flags = command.optsWithGlobals<SubscriptionFlags>();
      await withRegistry(flags, async (registry, config) => {
        if (!(await registry.delete(name)))
          throw new GeohookError(
            'GEOHOOK_ERR_SUBSCRIPTION_UNKNOWN',
            `subscriptions delete: no subscription "${name}" (geohook subscriptions list shows them)`,
          );
        const declared = config.subscriptions.some((subscription) => subscription.name === name);
        printJson({
          subscription: name,
          deleted: true,
          ...(declared ? { note: 'GEOHOOK_CONFIG declares it: the next start makes it again' } : {}),
        });
      });
    });

  subscriptions
    .command('list')
    .description('every subscription: its types, events waiting, handled, dead letters, dropped, and lag')
    .option('--json', 'print one JSON object')
    .action(async (_options: unknown, command: Command) => {
      const flags = command.optsWithGlobals<SubscriptionFlags>();
      await withRegistry(flags, async (registry, config) => {
        const status = await readSubscriptionStatus(registry.connection, config.prefix, registry, config.subscriptionBacklog);
        if (flags.json === true) return printJson({ subscriptions: status });
        if (status.length === 0)
          return printJson({ subscriptions: [], note: 'no subscriptions: geohook subscriptions create NAME --types PATTERN' });
        printTable(
          status.map(({ name, types, waiting, active, failed, dropped, lagSeconds }) => ({
            name,
            types: types.join(','),
            waiting,
            active,
            deadLetters: failed,
            dropped,
            lagSeconds: Math.round(lagSeconds),
          })),
        );
      });
    });
}
