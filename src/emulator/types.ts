/** The records the admin-API emulator keeps (field names as in spec/admin-api.md). */

/** A service type of the catalogue. */
export type ServiceType = 'GPServer' | 'FeatureServer' | 'MapServer' | (string & {});

/** One service of the emulator's catalogue, with what decides whether it takes webhooks. */
export interface CatalogService {
  folderName: string;
  serviceName: string;
  type: ServiceType;
  /** GP services: asynchronous ones take webhooks. */
  asynchronous?: boolean;
  /** Feature services: the definition `updateDefinition` changes. */
  capabilities?: string;
  syncEnabled?: boolean;
  /** Feature services: branch-versioned data is never supported. */
  branchVersioned?: boolean;
  /** Non-hosted feature services need nonversioned data with archiving. */
  hosted?: boolean;
  versioned?: boolean;
  archiving?: boolean;
}

/** `scheduleInfo` of a feature-service webhook. */
export interface ScheduleInfo {
  name: string;
  state: 'enabled';
  startAt: number;
  recurrenceInfo: { interval: number; frequency: 'second' };
}

/** A webhook as the admin API returns it (without `status`). */
export interface Webhook {
  id: string;
  folderName: string;
  serviceName: string;
  serviceType: string;
  name: string;
  changeTypes: string[];
  signatureKey: string;
  hookUrl: string;
  active: boolean;
  contentType: 'application/json' | 'application/x-www-form-urlencoded';
  scheduleInfo: ScheduleInfo | Record<string, never>;
  payloadFormat: 'json' | 'pjson';
  created: number;
  modified: number;
  ownerId: string;
  modifiedId: string;
}

/** The organisation-wide delivery settings (spec "Webhook settings"). */
export interface WebhookSettings {
  notificationAttempts: number;
  notificationTimeOutInSeconds: number;
  notificationElapsedTimeInSeconds: number;
  numberOfFailures: number;
  daysInPast: number;
}

/** The defaults: attempts 3, timeout 10 s, interval 5 s (spec Limits); deactivation 5 over 5 days (CONTRACT §5). */
export const defaultWebhookSettings: Readonly<WebhookSettings> = Object.freeze({
  notificationAttempts: 3,
  notificationTimeOutInSeconds: 10,
  notificationElapsedTimeInSeconds: 5,
  numberOfFailures: 5,
  daysInPast: 5,
});

/**
 * Bounds of each setting, shared by the emulator and the admin client. The spec gives attempts 1–5 and
 * timeout 1–60; the others are ours: an interval of at most an hour, and a deactivation policy of up to 100
 * failures over up to 30 days.
 */
export const webhookSettingBounds: Readonly<Record<keyof WebhookSettings, readonly [min: number, max: number]>> = Object.freeze({
  notificationAttempts: [1, 5],
  notificationTimeOutInSeconds: [1, 60],
  notificationElapsedTimeInSeconds: [1, 3600],
  numberOfFailures: [1, 100],
  daysInPast: [1, 30],
});

/** What fired: a GP job outcome or a feature-service change. */
export type EmulatorEvent =
  | { kind: 'gp'; outcome: 'succeeded' | 'failed' | 'canceled'; jobId: string; taskName: string }
  | { kind: 'feature'; changeType: string; layerId: number };

/** One attempt of a delivery. */
export interface DeliveryAttempt {
  at: number;
  /** HTTP status, when the receiver answered. */
  statusCode?: number;
  /** Why the attempt failed without a status (timeout, connection refused…). */
  error?: string;
}

/** One delivery to one webhook, as `GET /emulator/deliveries` shows it. */
export interface DeliveryRecord {
  id: string;
  webhookId: string;
  hookUrl: string;
  event: string;
  contentType: string;
  /** The signature header value sent, when the webhook has a key. */
  signature?: string;
  attempts: DeliveryAttempt[];
  outcome: 'pending' | 'delivered' | 'failed';
}
