/** geohook's public API. */
export { buildReceiver, type ReceiverOptions } from './receiver/build-receiver.js';
export { classifyEvent, type Classification } from './receiver/classify-event.js';
export { loadConfig, type GeohookConfig, type HookConfig, type ConfigOverrides } from './config/load-config.js';
export { EventQueue, type EventQueueOptions, type EnqueueResult } from './queue/event-queue.js';
export { configuredTarget, connectRedis, createProducerConnection, type RedisClient, type RedisTarget } from './queue/connection.js';
export { queueNames, allQueueNames, type QueueName } from './queue/names.js';
export {
  featureChangeTypes,
  type GeohookEvent,
  type GpEvent,
  type FeatureEvent,
  type UnknownEvent,
  type AnyGeohookEvent,
  type GpJobPayload,
  type FeaturePayloadItem,
  type PayloadEvent,
  type EventFamily,
  type GpEventType,
  type FeatureEventType,
  type FeatureChangeType,
  type ServiceRef,
} from './queue/envelope.js';
export { subscribe, type SubscribeOptions, type Subscription } from './consumers/subscribe.js';
export type { EventHandler, EventHandlers, HandlerContext } from './consumers/types.js';
export type { ConsumeOutcome } from './consumers/consumer-metrics.js';
export {
  fetchChanges,
  fetchJobResult,
  type FollowUpOptions,
  type FeatureChanges,
  type LayerChanges,
  type EsriFeature,
  type JobResult,
  type GpParameterValue,
} from './consumers/follow-up.js';
export { QueueInspector, jobStates, type QueueInspectorOptions, type JobCounts, type JobStateName, type RetriedJob } from './queue/queue-inspector.js';
export type { FailedJob, FailedJobsPage, FailedJobsQuery } from './queue/failed-jobs.js';
export type { EventJobRef, QueueSource } from './queue/find-event-job.js';
export { sign, computeDigest } from './signature/sign.js';
export { verify } from './signature/verify.js';
export { errorCodes, GeohookError, ConfigError, QueueUnavailableError, AdminApiError, AdminAuthError, type ErrorCode } from './errors.js';
export {
  createAdminClient,
  type AdminClient,
  type AdminClientOptions,
  type AdminAuth,
  type CreateWebhookParams,
  type FindServicesFilters,
  type ServiceName,
  type ServiceRecord,
  type Webhook,
  type WebhookSettings,
} from './admin/admin-client.js';
export { generateToken, type GenerateTokenOptions } from './admin/generate-token.js';
export { validatePlacementPolicy, type ServicePlacementPolicy, type PlacementPolicyEntry } from './admin/placement-policy.js';
export { explainPlacement, type Node, type NodeVerdict } from './admin/placement-explain.js';
export { buildEmulator, type EmulatorOptions } from './emulator/build-emulator.js';
export { EmulatorClock } from './emulator/clock.js';
export { createLoggerOptions, type LoggerSettings } from './logger.js';
export { RedisServer, type RedisServerOptions } from './embedded/redis-server.js';
