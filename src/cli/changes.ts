import { InvalidArgumentError, Option, type Command } from 'commander';
import { adminAuthFor, isOnlineAdminRoot } from '../arcgis/online-admin.js';
import { serviceRestUrl } from '../arcgis/rest-urls.js';
import { createServiceSession } from '../arcgis-request/service-session.js';
import { changeEventsQueueName } from '../changes/change-event.js';
import { changesQueueName } from '../changes/change-queues.js';
import { ChangeWriter } from '../changes/change-writer.js';
import { readChangesStatus } from '../changes/changes-status.js';
import { PreviousValuesStore } from '../changes/previous-values.js';
import { replayJob } from '../changes/range-jobs.js';
import { snapshotService } from '../changes/snapshot.js';
import { REGISTERED_HOOK } from '../config/self-registration.js';
import { serviceLocatorOf } from '../config/service-locator.js';
import { ConfigError } from '../errors.js';
import { scopeOf } from '../events/tracked-ranges.js';
import { eventJobOptions } from '../queue/event-queue.js';
import { openQueue } from '../queue/open-queue.js';
import { addQueueOptions, queueCommandConfig } from './config-options.js';
import { printJson, printLine, printTable } from './print.js';
import { connectQueueRedis } from './queue-redis-target.js';

interface ChangesFlags {
  redisUrl?: string;
  prefix?: string;
  config?: string;
  json?: boolean;
  service?: string;
  layer?: number;
  fromGen?: number;
  toGen?: number;
}

/** A whole number flag. */
function generation(value: string): number {
  if (!/^\d{1,16}$/.test(value)) throw new InvalidArgumentError('a server generation (a whole number)');
  return Number(value);
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
      const config = queueCommandConfig(flags);
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

  changes
    .command('replay')
    .description(
      'resolve a range of server generations again (a failed one, or one older than the dedup window): its events keep their ids',
    )
    .requiredOption('--service <name>', 'a CHANGES service, folder/name.FeatureServer')
    .addOption(new Option('--layer <id>', 'the layer (ArcGIS Online scopes are per layer)').argParser(generation))
    .addOption(new Option('--from-gen <gen>', 'the range starts after this generation').argParser(generation).makeOptionMandatory())
    .addOption(new Option('--to-gen <gen>', 'and ends at this one').argParser(generation).makeOptionMandatory())
    .action(async (_options: unknown, command: Command) => {
      const flags = command.optsWithGlobals<ChangesFlags>();
      const config = queueCommandConfig(flags);
      const service = flags.service!;
      if (config.admin === undefined || !config.admin.changes.services.includes(service)) {
        throw new ConfigError(`changes replay: ${service} is not a service of CHANGES (with ADMIN_URL)`);
      }
      if (flags.fromGen! >= flags.toGen!) throw new ConfigError('changes replay: --from-gen must be below --to-gen');
      const scope = `${scopeOf(REGISTERED_HOOK, service)}${flags.layer === undefined ? '' : `#${flags.layer}`}`;
      const job = replayJob({
        scope,
        from: flags.fromGen!,
        to: flags.toGen!,
        hook: REGISTERED_HOOK,
        serviceUrl: serviceRestUrl(config.admin.url, service).href,
      });
      const { connection } = await connectQueueRedis(config);
      const queue = openQueue(changesQueueName, { connection, prefix: config.prefix });
      try {
        await queue.add(job.name, job.data, job.opts);
        printJson({ queued: job.opts.jobId, scope, serverGens: [job.data.from, job.data.to] });
      } finally {
        await queue.close();
        connection.disconnect();
      }
    });

  changes
    .command('snapshot')
    .description(
      'read every row of a CHANGES service once (change.read events, previous values seeded); change events then go on from that generation',
    )
    .requiredOption('--service <name>', 'a CHANGES service, folder/name.FeatureServer')
    .action(async (_options: unknown, command: Command) => {
      const flags = command.optsWithGlobals<ChangesFlags>();
      const config = queueCommandConfig(flags);
      const service = flags.service!;
      const admin = config.admin;
      if (admin === undefined || !admin.changes.services.includes(service)) {
        throw new ConfigError(`changes snapshot: ${service} is not a service of CHANGES (with ADMIN_URL)`);
      }
      const auth = adminAuthFor(admin.url, admin.auth);
      const session = createServiceSession({
        trusted: serviceLocatorOf(config).trusted(REGISTERED_HOOK),
        ...(auth === undefined ? {} : { auth }),
        deadlineMs: 3_600_000,
      });
      const { connection } = await connectQueueRedis(config);
      const queue = openQueue(changeEventsQueueName, { connection, prefix: config.prefix, defaultJobOptions: eventJobOptions(config) });
      try {
        const writer = new ChangeWriter(connection, {
          queue,
          prefix: config.prefix,
          dedupMs: config.dedupRetentionSeconds * 1000,
          byService: admin.changes.byService,
        });
        const result = await snapshotService({
          connection,
          prefix: config.prefix,
          hook: REGISTERED_HOOK,
          service,
          serviceUrl: serviceRestUrl(admin.url, service),
          session,
          track: admin.changes.byService[service]?.track ?? admin.changes.track,
          writer,
          previous: new PreviousValuesStore(connection),
          online: isOnlineAdminRoot(admin.url),
        });
        printJson({ service, ...result });
      } finally {
        await queue.close();
        connection.disconnect();
      }
    });
}
