import { z } from 'zod';
import { validatePlacementPolicy, type ServicePlacementPolicy } from '../arcgis/placement-policy.js';
import { configuredServiceName, registerPattern } from '../arcgis/service-name.js';
import { webhookSettingBounds, type WebhookSettings } from '../arcgis/webhook-settings.js';

/** `folder/name.Type` or `name.Type`. */
export const serviceName = z.string().regex(configuredServiceName, 'services as folder/name.Type or name.Type');

/**
 * What REGISTER and `register` take: a service name, or a pattern of them with `*` (any characters, `/` included)
 * and `?` (one), such as `Hosted/*` or `*.FeatureServer`, resolved against the server's catalogue.
 */
export const registerEntry = z
  .string()
  .regex(registerPattern, 'services as folder/name.Type or name.Type, or patterns of them with * and ? (e.g. Hosted/*, *.FeatureServer)');

/** One organisation webhook setting: an integer within the bounds the admin API accepts. */
const setting = (name: keyof WebhookSettings) => {
  const [min, max] = webhookSettingBounds[name];
  return z.number().int().min(min, `an integer from ${min} to ${max}`).max(max, `an integer from ${min} to ${max}`).exactOptional();
};

/** A `servicePlacementPolicy`, checked with the admin client's own validation. */
const placementPolicy = z.unknown().transform((value, ctx): ServicePlacementPolicy => {
  const result = validatePlacementPolicy(value);
  if (result.ok) return result.policy;
  ctx.addIssue({ code: 'custom', message: result.errors.join('; ') });
  return z.NEVER;
});

/** The five organisation-wide webhook settings of `GEOHOOK_CONFIG` (`settings`), each optional. */
export const orgSettingsSchema = z
  .object({
    notificationAttempts: setting('notificationAttempts'),
    notificationTimeOutInSeconds: setting('notificationTimeOutInSeconds'),
    notificationElapsedTimeInSeconds: setting('notificationElapsedTimeInSeconds'),
    numberOfFailures: setting('numberOfFailures'),
    daysInPast: setting('daysInPast'),
  })
  .strict();

/** The placement policies of `GEOHOOK_CONFIG` (`placement`): service → `servicePlacementPolicy`. */
export const placementSchema = z.record(serviceName, placementPolicy);
