/** The organisation-wide delivery settings of webhooks: retries, and when a failing webhook is deactivated. */
export interface WebhookSettings {
  notificationAttempts: number;
  notificationTimeOutInSeconds: number;
  notificationElapsedTimeInSeconds: number;
  numberOfFailures: number;
  daysInPast: number;
}

/** The server's defaults: 3 attempts, a 10 s timeout, 5 s between attempts; deactivation after 5 failures over 5 days. */
export const defaultWebhookSettings: Readonly<WebhookSettings> = Object.freeze({
  notificationAttempts: 3,
  notificationTimeOutInSeconds: 10,
  notificationElapsedTimeInSeconds: 5,
  numberOfFailures: 5,
  daysInPast: 5,
});

/**
 * Bounds of each setting, shared by the emulator, the admin client and the configuration. The server takes
 * attempts 1–5 and a timeout of 1–60 s; the others are geohook's: an interval of at most an hour, and a
 * deactivation policy of up to 100 failures over up to 30 days.
 */
export const webhookSettingBounds: Readonly<Record<keyof WebhookSettings, readonly [min: number, max: number]>> = Object.freeze({
  notificationAttempts: [1, 5],
  notificationTimeOutInSeconds: [1, 60],
  notificationElapsedTimeInSeconds: [1, 3600],
  numberOfFailures: [1, 100],
  daysInPast: [1, 30],
});

/** ArcGIS Online's hosted feature layer webhook settings: attempts, the per-attempt timeout, and consecutive failures before deactivation. */
export interface OnlineWebhookSettings {
  notificationAttempts: number;
  notificationTimeOutInSeconds: number;
  numberOfFailures: number;
}

/** ArcGIS Online's defaults: one attempt, a 10 s timeout, deactivation after 5 consecutive failures. */
export const defaultOnlineWebhookSettings: Readonly<OnlineWebhookSettings> = Object.freeze({
  notificationAttempts: 1,
  notificationTimeOutInSeconds: 10,
  numberOfFailures: 5,
});

/** ArcGIS Online's bounds: attempts 1–5, a timeout of 1–10 s, 1–10 consecutive failures. */
export const onlineWebhookSettingBounds: Readonly<Record<keyof OnlineWebhookSettings, readonly [min: number, max: number]>> = Object.freeze(
  {
    notificationAttempts: [1, 5],
    notificationTimeOutInSeconds: [1, 10],
    numberOfFailures: [1, 10],
  },
);
