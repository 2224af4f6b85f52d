/**
 * geohook's public API, the names the docs document, under semver: the receiver, the configuration, the
 * consumers' `subscribe()` and their event types, the follow-up helpers, the admin client, `rotateKey`, signing and
 * verifying, and the errors. The emulator is the entry `geohook/emulator`; `geohook/internal` holds the parts
 * the command line builds on, with no such promise.
 */
export { buildApp as buildReceiver } from './app.js';
export { type ReceiverOptions } from './receiver/build-receiver.js';
export { classifyEvent, type Classification } from './events/classify-event.js';
export { loadConfig, type GeohookConfig, type HookConfig, type ConfigOverrides } from './config/load-config.js';
export { configuredTarget, connectRedis, type RedisClient, type RedisTarget } from './redis/connection.js';
export { queueNames, allQueueNames, backfillQueueName, type QueueName } from './queue/names.js';
export {
  type GeohookEvent,
  type GpEvent,
  type FeatureEvent,
  type UnknownEvent,
  type AnyGeohookEvent,
  type EventFamily,
  type GpEventType,
  type FeatureEventType,
  type ServiceRef,
  type StoredEvent,
  type EventFields,
  type EventSource,
  type EventChanges,
} from './events/envelope.js';
export { eventFromStored } from './events/stored-event.js';
export { type GpJobPayload, type FeaturePayloadItem, type PayloadEvent } from './arcgis/payload.js';
export type { FeatureChangeType } from './arcgis/change-types.js';
export { subscribe, type SubscribeOptions, type Subscription } from './consumers/subscribe.js';
export { type ChangeEvent, type ChangeEventType, type ChangeOp, type ChangeRow, type ChangeSource } from './changes/change-event.js';
export { type SubmissionEvent, type SubmissionFeature } from './changes/submission-event.js';
export type {
  ChangedFieldsHandler,
  EventHandler,
  EventHandlers,
  HandlerContext,
  HandlerOf,
  HandlerPattern,
  HandlersByPattern,
} from './consumers/types.js';
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
export { sign } from './signature/sign.js';
export { verify } from './signature/verify.js';
export { errorCodes, GeohookError, ConfigError, QueueUnavailableError, AdminApiError, AdminAuthError, type ErrorCode } from './errors.js';
export {
  createAdminClient,
  type AdminClient,
  type AdminClientOptions,
  type FindServicesFilters,
  type ServiceRecord,
} from './admin/admin-client.js';
export { type ServiceName } from './arcgis/service-name.js';
export { type AdminAuth } from './arcgis/admin-auth.js';
export { type WebhookSettings } from './arcgis/webhook-settings.js';
export { type CreateWebhookParams, type Webhook } from './arcgis/webhook.js';
export { generateToken, type GenerateTokenOptions } from './arcgis-request/generate-token.js';
export { validatePlacementPolicy, type ServicePlacementPolicy, type PlacementPolicyEntry } from './arcgis/placement-policy.js';
export { explainPlacement, type PlacementNode, type NodeVerdict } from './arcgis/explain-placement.js';
export { rotateKey, type RotateKeyOptions, type RotateKeyResult, type RotatedService } from './registration/rotate-key.js';
