/**
 * `geohook/internal`: the parts of geohook the command line and the tests build on (the producer, the queue
 * inspector, the embedded redis-server, the logger's options), for programs that need them. Not under semver: any
 * release may change them. The public API is `geohook`.
 */
export { EventQueue, type EventQueueOptions, type EnqueueResult } from './queue/event-queue.js';
export type { AcceptedEvent } from './events/build-event.js';
export {
  QueueInspector,
  jobStates,
  type QueueInspectorOptions,
  type JobCounts,
  type JobStateName,
  type RetriedJob,
} from './queue/queue-inspector.js';
export type { FailedJob, FailedJobsPage, FailedJobsQuery } from './queue/failed-jobs.js';
export { oneQueue, type EventJobRef, type QueueSource } from './queue/find-event-job.js';
export { createProducerConnection } from './redis/connection.js';
export { RedisServer, type RedisServerOptions } from './embedded/redis-server.js';
export { createLoggerOptions, type LoggerSettings } from './logger.js';
export { computeDigest } from './signature/sign.js';
export { featureChangeTypes } from './arcgis/change-types.js';
