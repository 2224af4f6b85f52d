import type { Job } from 'bullmq';
import type { Cluster, Redis } from 'ioredis';
import pino, { type Logger } from 'pino';
import { Registry } from 'prom-client';
import { changeEventsQueueName, type ChangeEvent } from '../changes/change-event.js';
import type { SubmissionEvent } from '../changes/submission-event.js';
import { bullmq } from '../commonjs/bullmq.js';
import { ioredis } from '../commonjs/ioredis.js';
import { assertClusterPrefix } from '../config/cluster-prefix.js';
import { DEFAULT_PREFIX } from '../config/defaults.js';
import { envRedisUrl } from '../config/env-redis-url.js';
import { SUBSCRIPTION_NAME } from '../config/subscription-schema.js';
import { runningUpRedisUrl } from '../embedded/recorded-redis-url.js';
import { ConfigError } from '../errors.js';
import type { EventFamily, GeohookEvent } from '../events/envelope.js';
import { compilePattern, type ConsumedQueue, type EventPattern } from '../fanout/event-patterns.js';
import { allQueueNames, queueNames, subscriptionQueueName, type QueueName } from '../queue/names.js';
import { handledProgress, replayedAtOf } from '../queue/replay-mark.js';
import { isAuthRefusal } from '../redis/auth-refusal.js';
import type { ConnectionOptions } from '../redis/connection.js';
import { subscriptionsKey } from '../redis/keys.js';
import { createConsumerMetrics, type ConsumeOutcome, type ConsumerMetrics } from './consumer-metrics.js';
import { watchPasswordRefusal } from './password-refusal.js';
import type { ChangedFieldsHandler, EventHandler, HandlerPattern, HandlersByPattern } from './types.js';
import { validateChangeEvent } from './validate-change-event.js';
import { validateEvent } from './validate-event.js';

/** Options of {@link subscribe}; `P`: the patterns of its handlers. */
export interface SubscribeOptions<P extends HandlerPattern = HandlerPattern> {
  /**
   * Redis: a `redis://` URL or ioredis options (the subscription opens and closes its connection), or an
   * ioredis instance (a `Redis`, or a `Cluster` with a hash-tag `prefix`) made with
   * `maxRetriesPerRequest: null` that the caller closes.
   * @defaultValue REDIS_URL, else the Redis of the `geohook up` running in the working directory (the URL it records
   * in `.geohook/redis/url`); neither is a `GEOHOOK_ERR_CONFIG`
   */
  connection?: string | ConnectionOptions | Redis | Cluster;
  /** BullMQ key prefix, as GEOHOOK_PREFIX. @defaultValue 'geohook' */
  prefix?: string;
  /**
   * Handlers by event-type pattern (`gp.job.succeeded`, `gp.*`, `feature.*`, `change.*`, `change.submission`, `unknown`,
   * `*`), each handed the event its pattern takes.
   */
  handlers: HandlersByPattern<P>;
  /**
   * Read this subscription (docs/subscriptions.md): every event it takes, shared with its other workers only. Without
   * it the handlers' patterns choose among the family queues (`gp-events`, `feature-events`, `change-events`), whose
   * events every worker of every application shares.
   */
  subscription?: string;
  /** Events handled at the same time, per queue. @defaultValue 10 */
  concurrency?: number;
  /** A prom-client registry for the consumer metrics (e.g. the receiver's). @defaultValue a registry of its own */
  metrics?: Registry;
  /** Where handler failures and connection trouble are logged. @defaultValue warnings and errors on stderr */
  logger?: Logger;
}

/** A running subscription: one BullMQ Worker per queue its patterns need. */
export interface Subscription {
  /** The queues consumed. */
  readonly queues: readonly string[];
  /** The registry holding the consumer metrics. */
  readonly metrics: Registry;
  /**
   * Resolves once every worker is connected. A `subscription` that does not exist yet is logged once as a warning:
   * its queue gets events only once it is made. Rejects with `GEOHOOK_ERR_REDIS_AUTH` when Redis refuses the password
   * (none given, or a wrong one): the subscription has stopped then.
   */
  ready(): Promise<void>;
  /**
   * Stops taking events and waits for the handlers running; after `timeoutMs` they are abandoned and
   * their events are taken again by another consumer once their lock expires (BullMQ's stalled check).
   */
  close(options?: { timeoutMs?: number }): Promise<void>;
}

interface Route {
  readonly pattern: EventPattern;
  readonly handler: EventHandler<GeohookEvent | ChangeEvent | SubmissionEvent>;
  /** Change handlers that take only the updates of these fields. */
  readonly changed?: ReadonlySet<string>;
}

/** A handler map's entry as a route: a function, or (change patterns) `{ changed, handler }`. */
function routeOf(pattern: string, entry: unknown): Route {
  if (typeof entry === 'function')
    return { pattern: compilePattern(pattern), handler: entry as EventHandler<GeohookEvent | ChangeEvent | SubmissionEvent> };
  const { changed, handler } = (typeof entry === 'object' && entry !== null ? entry : {}) as Partial<ChangedFieldsHandler>;
  if (typeof handler !== 'function') throw new ConfigError(`handler "${pattern}": not a function, nor { changed, handler }`);
  if (!pattern.startsWith('change.'))
    throw new ConfigError(`handler "${pattern}": { changed } takes change events only: give a "change.*" pattern`);
  if (!Array.isArray(changed) || changed.length === 0 || !changed.every((name) => typeof name === 'string' && name !== ''))
    throw new ConfigError(`handler "${pattern}": changed is a list of field names`);
  return {
    pattern: compilePattern(pattern),
    handler: handler as EventHandler<GeohookEvent | ChangeEvent | SubmissionEvent>,
    changed: new Set(changed),
  };
}

/** Whether a route takes the event: its pattern matches one of the types, and a `changed` route sees one of its fields changed. */
function takes(route: Route, { event, types }: Decoded): boolean {
  if (!types.some((type) => route.pattern.matches(type))) return false;
  if (route.changed === undefined) return true;
  const { changedFields } = event as ChangeEvent;
  return event.type === 'change.updated' && changedFields !== undefined && changedFields.some((name) => route.changed!.has(name));
}

/** An event a worker decoded, with the types handlers are matched against. */
interface Decoded {
  event: GeohookEvent | ChangeEvent | SubmissionEvent;
  types: readonly string[];
}

/** Every queue a subscription may consume: the event families', then the change events'. */
const consumedQueues: readonly ConsumedQueue[] = [...allQueueNames, changeEventsQueueName];

/** The families whose queue each name is. */
const familyOf = Object.fromEntries(Object.entries(queueNames).map(([family, name]) => [name, family])) as Record<QueueName, EventFamily>;

/** Handlers already done for a job, kept in its progress so that a retry does not run them twice. */
function handledPatterns(job: Job): Set<string> {
  const progress = job.progress as { handled?: unknown } | number | string | boolean;
  const handled = typeof progress === 'object' && progress !== null && Array.isArray(progress.handled) ? progress.handled : [];
  return new Set(handled.filter((pattern): pattern is string => typeof pattern === 'string'));
}

/** The connection given; else one to REDIS_URL, else to the Redis of the `geohook up` running in the working directory. */
function connectionOf(connection: SubscribeOptions['connection'] = envRedisUrl() ?? runningUpRedisUrl()): {
  redis: Redis | Cluster;
  owned: boolean;
} {
  if (connection instanceof ioredis.Redis || connection instanceof ioredis.Cluster) return { redis: connection, owned: false };
  // Worker connections wait for Redis through an outage instead of failing (BullMQ's rule for workers).
  const options = { maxRetriesPerRequest: null } as const;
  const redis = typeof connection === 'string' ? new ioredis.Redis(connection, options) : new ioredis.Redis({ ...connection, ...options });
  return { redis, owned: true };
}

/** The event of a job of queue `name`: a change event, or a geohook event of the queue's family (of its own `family` in a subscription's queue). */
function decode(name: string, data: unknown): Decoded {
  const family = name in familyOf ? familyOf[name as QueueName] : (data as { family?: EventFamily } | null)?.family;
  if (family === undefined) {
    const event = validateChangeEvent(data);
    return { event, types: [event.type] };
  }
  const event = validateEvent(data, family);
  return { event, types: event.types };
}

/** Runs the handlers of `routes` that match the event's types and have not run yet, in the order they were given. */
async function dispatch(job: Job, decoded: Decoded, routes: readonly Route[], metrics: ConsumerMetrics): Promise<number> {
  const { event } = decoded;
  const matching = routes.filter((route) => takes(route, decoded));
  const handled = handledPatterns(job);
  for (const { pattern, handler } of matching) {
    if (handled.has(pattern.pattern)) continue;
    const stopTimer = metrics.handlerSeconds.startTimer({ handler: pattern.pattern });
    try {
      const replayedAt = replayedAtOf(job);
      await handler(event, {
        job,
        attempt: job.attemptsMade + 1,
        pattern: pattern.pattern,
        ...(replayedAt === undefined ? {} : { replayedAt }),
      });
      stopTimer({ outcome: 'completed' });
    } catch (err) {
      stopTimer({ outcome: 'failed' });
      throw err;
    }
    handled.add(pattern.pattern);
    if (matching.length > 1) await job.updateProgress(handledProgress(job, [...handled]));
  }
  return matching.length;
}

/** Whether subscription `name` exists in the Redis of `prefix`. */
export async function subscriptionExists(redis: Redis | Cluster, prefix: string, name: string): Promise<boolean> {
  return (await redis.hexists(subscriptionsKey(prefix), name)) === 1;
}

/** What to do about reading subscription `name` that does not exist. */
export const unknownSubscriptionHint = (name: string): string =>
  `no subscription "${name}": nothing reaches its queue until it is made (geohook subscriptions create ${name} --types …, or "subscriptions" in GEOHOOK_CONFIG)`;

/**
 * Consumes geohook events with typed handlers. Each delivery reaches every handler whose pattern matches
 * one of its `types`, once: a handler that succeeded is not run again when a later one fails and the event
 * is retried. Events whose data is not a geohook envelope fail at once (poison) and stay in the failed set.
 *
 * @example
 * const subscription = subscribe({
 *   connection: 'redis://127.0.0.1:6379',
 *   handlers: { 'gp.job.succeeded': async (event) => console.log(event.payload) },
 * });
 */
export function subscribe<P extends HandlerPattern>(options: SubscribeOptions<P>): Subscription {
  const routes: Route[] = Object.entries(options.handlers).map(([pattern, entry]) => routeOf(pattern, entry));
  if (routes.length === 0) throw new ConfigError('subscribe: at least one handler is needed');
  const concurrency = options.concurrency ?? 10;
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new ConfigError('subscribe: concurrency is a whole number from 1');
  const registry = options.metrics ?? new Registry();
  const metrics = createConsumerMetrics(registry);
  const logger = options.logger ?? pino({ level: 'warn' }, pino.destination({ fd: 2, sync: false }));
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  if (options.connection instanceof ioredis.Cluster) assertClusterPrefix(prefix);
  if (options.subscription !== undefined && !SUBSCRIPTION_NAME.test(options.subscription))
    throw new ConfigError(
      `subscribe: subscription "${options.subscription}" is not a subscription name (lower-case letters, digits and "-")`,
    );
  const { redis, owned } = connectionOf(options.connection);
  redis.on('error', () => undefined); // each worker reports connection trouble below

  const running = new Set<Promise<void>>();
  const queues: readonly string[] =
    options.subscription === undefined
      ? consumedQueues.filter((name) => routes.some((route) => route.pattern.queues.includes(name)))
      : [subscriptionQueueName(options.subscription)];
  const workers = queues.map((name) => {
    const queueRoutes =
      options.subscription === undefined ? routes.filter((route) => route.pattern.queues.includes(name as ConsumedQueue)) : routes;
    const count = (job: Job, outcome: ConsumeOutcome): void => {
      metrics.consumed.inc({ queue: name, type: job.name, outcome });
    };
    const process = async (job: Job): Promise<void> => {
      let decoded: Decoded;
      try {
        decoded = decode(name, job.data);
      } catch (err) {
        count(job, 'poison');
        logger.error({ err, queue: name, jobId: job.id }, 'poison event failed without retry');
        throw err;
      }
      try {
        const handlers = await dispatch(job, decoded, queueRoutes, metrics);
        count(job, handlers === 0 ? 'ignored' : 'completed');
      } catch (err) {
        const attempts = job.opts.attempts ?? 1;
        const exhausted = err instanceof bullmq.UnrecoverableError || job.attemptsMade + 1 >= attempts;
        count(job, exhausted ? 'failed' : 'retried');
        logger.warn(
          { err, queue: name, eventId: decoded.event.id, type: decoded.event.type, attempt: job.attemptsMade + 1, attempts },
          exhausted ? 'event failed for good: it stays in the failed set' : 'event handler failed: retrying with backoff',
        );
        throw err;
      }
    };
    const worker = new bullmq.Worker(
      name,
      (job) => {
        const handling = process(job);
        const settled = handling.then(
          () => undefined,
          () => undefined,
        );
        running.add(settled);
        void settled.then(() => running.delete(settled));
        return handling;
      },
      { connection: redis, prefix, concurrency },
    );
    worker.on('error', (err) => {
      if (isAuthRefusal(err)) password.refuse(err);
      else logger.warn({ err, queue: name }, 'consumer connection trouble: BullMQ retries');
    });
    return worker;
  });

  const password = watchPasswordRefusal({
    workers,
    redis,
    owned,
    logger,
    source: options.connection === undefined ? 'REDIS_URL' : 'the connection of subscribe()',
  });

  return {
    queues,
    metrics: registry,
    async ready() {
      await password.connected();
      const name = options.subscription;
      if (name !== undefined && !(await subscriptionExists(redis, prefix, name)))
        logger.warn({ subscription: name }, unknownSubscriptionHint(name));
    },
    async close({ timeoutMs = 10_000 } = {}) {
      // Stop taking events, give the running handlers up to timeoutMs, then close without waiting more:
      // BullMQ's own close would wait for a stuck handler forever.
      await Promise.all(workers.map((worker) => worker.pause(true)));
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      });
      await Promise.race([Promise.all(running), late]);
      clearTimeout(timer);
      await Promise.all(workers.map((worker) => worker.close(true)));
      if (owned) await redis.quit().catch(() => redis.disconnect());
    },
  };
}
