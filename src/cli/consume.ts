import { Option, type Command } from 'commander';
import type { Registry } from 'prom-client';
import { fastify } from '../commonjs/fastify.js';
import { loadConfig, type GeohookConfig } from '../config/load-config.js';
import { subscriptionExists, unknownSubscriptionHint } from '../consumers/subscribe.js';
import { ConfigError, GeohookError } from '../errors.js';
import { createLogger } from '../logger.js';
import { closeOnSignal } from './close-on-signal.js';
import { addQueueOptions, configOption, configOverrides } from './config-options.js';
import { startEventPrinter } from './event-printer.js';
import { connectQueueRedis, queueRedisTarget } from './queue-redis-target.js';

interface ConsumeOptions {
  type: string[];
  redisUrl?: string;
  prefix?: string;
  config?: string;
  concurrency: string;
  metricsPort?: string;
  logLevel?: string;
  subscription?: string;
}

/** Serves the consumer metrics at `GET /metrics` on `port` (loopback and all interfaces alike). */
async function serveMetrics(port: number, registry: Registry): Promise<() => Promise<void>> {
  const app = fastify();
  app.get('/metrics', async (_request, reply) => reply.type(registry.contentType).send(await registry.metrics()));
  await app.listen({ host: '0.0.0.0', port });
  return () => app.close();
}

/**
 * Connects once before consuming, as a fail-fast command does: a Redis that does not answer, or refuses the password,
 * is one line (the consumer's own connection would retry for ever); a subscription that does not exist is refused,
 * its queue would stay empty with nothing said.
 */
async function checkQueues(config: GeohookConfig, subscription: string | undefined): Promise<void> {
  const { connection } = await connectQueueRedis(config);
  try {
    if (subscription !== undefined && !(await subscriptionExists(connection, config.prefix, subscription)))
      throw new GeohookError('GEOHOOK_ERR_SUBSCRIPTION_UNKNOWN', `consume --subscription: ${unknownSubscriptionHint(subscription)}`);
  } finally {
    connection.disconnect();
  }
}

async function runConsume(options: ConsumeOptions): Promise<void> {
  const { redisUrl, prefix, config: configFile, logLevel } = options;
  const config = loadConfig(process.env, configOverrides({ redisUrl, prefix, config: configFile, logLevel }));
  const concurrency = Number(options.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new ConfigError('--concurrency: a whole number from 1');
  const metricsPort = options.metricsPort === undefined ? undefined : Number(options.metricsPort);
  if (metricsPort !== undefined && !(Number.isInteger(metricsPort) && metricsPort >= 0 && metricsPort <= 65535)) {
    throw new ConfigError('--metrics-port: a port number from 0 to 65535');
  }
  await checkQueues(config, options.subscription);
  const logger = createLogger({
    level: config.logLevel,
    signatureHeaders: config.signatureHeaders,
    format: config.logFormat ?? 'json',
    fd: 2,
  });
  const printer = startEventPrinter({
    redis: queueRedisTarget(config),
    prefix: config.prefix,
    patterns: options.type.length > 0 ? options.type : ['*'],
    concurrency,
    logger,
    ...(options.subscription === undefined ? {} : { subscription: options.subscription }),
  });
  const stopMetrics = metricsPort === undefined ? undefined : await serveMetrics(metricsPort, printer.metrics);
  closeOnSignal(logger, async () => {
    await printer.close();
    await stopMetrics?.();
    logger.flush();
  });
  await printer.ready();
  logger.info({ queues: printer.queues, patterns: options.type }, 'consuming: events are printed as JSON lines on stdout');
  if (options.subscription === undefined)
    logger.info(
      'without --subscription the family queues are read: every other worker on them shares their events (an application of its own: geohook subscriptions create NAME, then --subscription NAME)',
    );
}

/** `geohook consume [--type PATTERN]…`: prints matching events as JSON lines (docs/cli.md). */
export function registerConsume(command: Command): void {
  command
    .addOption(
      new Option('--type <pattern>', 'event-type pattern to consume; repeat for several')
        .argParser((value: string, previous: string[]) => [...previous, value])
        .default([], '"*"'),
    )
    .addOption(configOption('LOG_LEVEL'))
    .addOption(new Option('--subscription <name>', 'read this subscription: every event it takes, shared with its other workers only'))
    .addOption(new Option('--concurrency <n>', 'events handled at the same time per queue; 1 keeps the order').default('1'))
    .addOption(new Option('--metrics-port <port>', 'serve the consumer metrics at GET /metrics on this port'))
    .action((options: ConsumeOptions) => runConsume(options));
  addQueueOptions(command);
}
