import type { Queue } from 'bullmq';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { changeEventsQueueName } from '../changes/change-event.js';
import { changesQueueName } from '../changes/change-queues.js';
import type { GeohookConfig } from '../config/load-config.js';
import { subscriptionExists, unknownSubscriptionHint } from '../consumers/subscribe.js';
import { ConfigError, GeohookError } from '../errors.js';
import { EventQueue } from '../queue/event-queue.js';
import { oneQueue } from '../queue/find-event-job.js';
import { allQueueNames, backfillQueueName, subscriptionQueueName, type QueueName } from '../queue/names.js';
import { openQueue } from '../queue/open-queue.js';
import { countJobs, QueueInspector, type JobCounts } from '../queue/queue-inspector.js';
import { readServiceReports, serviceColumns, serviceReportRow, type ServiceReport } from '../queue/service-report.js';
import type { RedisClient } from '../redis/connection.js';
import { relayQueueName } from '../relay/relay-queues.js';
import { SubscriptionRegistry } from '../subscriptions/subscription-registry.js';
import { addQueueOptions, queueCommandConfig } from './config-options.js';
import { printJson, printLine, printResult, printTable } from './print.js';
import { connectQueueRedis } from './queue-redis-target.js';

const FAILED_COLUMNS = ['failedAt', 'queue', 'jobId', 'type', 'hook', 'attemptsMade', 'failedReason'] as const;

interface EventsFlags {
  redisUrl?: string;
  prefix?: string;
  config?: string;
  queue?: QueueName;
  subscription?: string;
  limit?: number;
  offset?: number;
  all?: boolean;
  table?: boolean;
  services?: boolean;
}

/** A whole number flag of at least `min`. */
function wholeNumber(min: number): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value) || Number(value) < min) throw new InvalidArgumentError(`a whole number from ${min}`);
    return Number(value);
  };
}

/**
 * Jobs per state of every geohook queue: the event families', the backfill's, the change queues', each relay route's
 * of the config and each subscription's in Redis, in that order.
 */
async function countEveryQueue(connection: RedisClient, config: GeohookConfig): Promise<Record<string, JobCounts>> {
  const subscriptions = await new SubscriptionRegistry(connection, config.prefix).list();
  return countJobs(connection, config.prefix, [
    ...allQueueNames,
    backfillQueueName,
    changesQueueName,
    changeEventsQueueName,
    ...config.relays.map((route) => relayQueueName(route.name)),
    ...subscriptions.map((subscription) => subscriptionQueueName(subscription.name)),
  ]);
}

/** What `withInspector` hands its work besides the inspector. */
interface QueueReaders {
  services(): Promise<ServiceReport[]>;
  /** {@link countEveryQueue}. */
  everyQueue(): Promise<Record<string, JobCounts>>;
}

/**
 * The queue of `--subscription`, once it is known to exist (its queue would only look empty), else undefined: the
 * three family queues are the inspector's.
 */
async function subscriptionQueue(connection: RedisClient, prefix: string, flags: EventsFlags): Promise<Queue | undefined> {
  const name = flags.subscription;
  if (name === undefined) return undefined;
  if (flags.queue !== undefined) throw new ConfigError(`events: --queue ${flags.queue} or --subscription ${name}, not both`);
  if (!(await subscriptionExists(connection, prefix, name)))
    throw new GeohookError('GEOHOOK_ERR_SUBSCRIPTION_UNKNOWN', `events --subscription: ${unknownSubscriptionHint(name)}`);
  return openQueue(subscriptionQueueName(name), { connection, prefix, skipWaitingForReady: true });
}

/**
 * Runs `work` on the queues the flags and environment name (the family queues, or `--subscription`'s), over one
 * fail-fast connection: Redis that does not answer is one clear error within seconds, never a hang.
 */
async function withInspector<T>(flags: EventsFlags, work: (inspector: QueueInspector, readers: QueueReaders) => Promise<T>): Promise<T> {
  const config = queueCommandConfig(flags);
  const { connection, where } = await connectQueueRedis(config);
  const eventQueue = new EventQueue({ connection, prefix: config.prefix });
  let subscription: Queue | undefined;
  try {
    subscription = await subscriptionQueue(connection, config.prefix, flags);
    const completedJobsAgeSeconds = config.completedJobs.ageSeconds;
    const inspector =
      subscription === undefined
        ? new QueueInspector({ queues: eventQueue, completedJobsAgeSeconds })
        : new QueueInspector({ queues: oneQueue(subscription), names: [subscription.name], completedJobsAgeSeconds });
    return await work(inspector, {
      services: () => readServiceReports(connection, config.prefix),
      everyQueue: () => countEveryQueue(connection, config),
    });
  } catch (err) {
    if (err instanceof GeohookError || connection.status === 'ready') throw err;
    throw new GeohookError('GEOHOOK_ERR_QUEUE_UNAVAILABLE', `lost Redis at ${where}: ${(err as Error).message}`, { cause: err });
  } finally {
    await Promise.all([eventQueue.close(), subscription?.close()]);
    connection.disconnect();
  }
}

/** The action of an `events` subcommand: flags of the command and its parent, positional arguments. */
function action(run: (flags: EventsFlags, args: string[]) => Promise<void>): (...args: unknown[]) => Promise<void> {
  return (...args) => {
    const command = args[args.length - 1] as Command;
    return run(command.optsWithGlobals<EventsFlags>(), command.processedArgs.flat() as string[]);
  };
}

const queueOption = (description: string): Option => new Option('--queue <name>', description).choices(allQueueNames);

const subscriptionOption = (): Option =>
  new Option('--subscription <name>', "a subscription's queue (sub-<name>) instead of the family queues");

/** `geohook events …`: job counts, dead letters, retries and replays from the shell. */
export function registerEvents(events: Command): void {
  addQueueOptions(events);

  events
    .command('stats')
    .description(
      'jobs per queue and state (every queue: events, backfill, changes, relay routes, subscriptions); with --table, each service too (webhook state, deliveries, watermark, backfill, poll)',
    )
    .option('--services', 'print the services instead of the queues')
    .option('--table', 'print readable tables instead of JSON')
    .action(
      action(async (flags) => {
        const table = flags.table === true;
        if (flags.services === true) {
          const services = await withInspector(flags, (_inspector, readers) => readers.services());
          return printResult(table ? services.map(serviceReportRow) : services, flags, serviceColumns);
        }
        const [counts, services] = await withInspector(flags, (_inspector, readers) =>
          Promise.all([readers.everyQueue(), table ? readers.services() : []]),
        );
        if (!table) return printJson(counts);
        printTable(Object.entries(counts).map(([queue, jobs]) => ({ queue, ...jobs })));
        if (services.length === 0) return;
        printLine('');
        printTable(services.map(serviceReportRow), serviceColumns);
      }),
    );

  events
    .command('failed')
    .description('dead letters: jobs that used up their attempts, newest first')
    .addOption(queueOption('only this queue'))
    .addOption(subscriptionOption())
    .addOption(new Option('--limit <n>', 'at most this many jobs').argParser(wholeNumber(1)).default(50))
    .addOption(new Option('--offset <n>', 'skip this many newest ones').argParser(wholeNumber(0)).default(0))
    .option('--table', 'print a readable table instead of JSON')
    .action(
      action(async (flags) => {
        const { queue, limit, offset } = flags;
        const page = await withInspector(flags, (inspector) =>
          inspector.failed({ ...(queue === undefined ? {} : { queue }), limit, offset }),
        );
        printResult(flags.table === true ? page.jobs : page, flags, FAILED_COLUMNS);
      }),
    );

  events
    .command('retry')
    .description('put failed jobs back to be consumed again, with their whole retry policy')
    .argument('[ids...]', 'event ids (or job ids) of failed jobs')
    .option('--all', 'every failed job (of --queue or --subscription, or of all three family queues)')
    .addOption(queueOption('look in this queue only'))
    .addOption(subscriptionOption())
    .action(
      action(async (flags, ids) => {
        if (ids.length > 0 === (flags.all === true)) throw new ConfigError('events retry: give event ids, or --all');
        const options = flags.queue === undefined ? {} : { queue: flags.queue };
        const retried = await withInspector(flags, (inspector) =>
          flags.all === true ? inspector.retryAll(options) : inspector.retry(ids, options),
        );
        printJson({ retried });
      }),
    );

  events
    .command('replay')
    .description('consume an event again: a completed (or failed) job goes back to its queue with the same id and data')
    .argument('<id>', 'event id (or job id)')
    .addOption(subscriptionOption())
    .action(
      action(async (flags, [id]) => {
        const replayed = await withInspector(flags, (inspector) => inspector.replay(id!));
        printJson({ replayed });
      }),
    );
}
