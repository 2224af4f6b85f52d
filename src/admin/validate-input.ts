import { validatePlacementPolicy, type ServicePlacementPolicy } from '../arcgis/placement-policy.js';
import { webhookSettingBounds } from '../arcgis/webhook-settings.js';
import type { WebhookSettings } from '../arcgis/webhook-settings.js';
import type { CreateWebhookParams } from '../arcgis/webhook.js';
import { GeohookError } from '../errors.js';

/** A client argument that is refused before anything is sent. */
export const invalidArgument = (message: string): GeohookError => new GeohookError('GEOHOOK_ERR_ADMIN_INVALID', message);

const describe = (value: unknown): string => (typeof value === 'string' ? JSON.stringify(value) : String(value));

/** Every given setting is a known one and an integer within its bounds; otherwise `GEOHOOK_ERR_ADMIN_INVALID`. */
export function validateSettings(settings: Partial<WebhookSettings>): void {
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) {
    throw invalidArgument('settings: must be an object with any of ' + Object.keys(webhookSettingBounds).join(', '));
  }
  for (const [name, value] of Object.entries(settings) as [string, unknown][]) {
    const bounds = webhookSettingBounds[name as keyof WebhookSettings] as readonly [number, number] | undefined;
    if (bounds === undefined)
      throw invalidArgument(`settings.${name}: unknown setting, must be one of ${Object.keys(webhookSettingBounds).join(', ')}`);
    if (value === undefined) continue;
    const [min, max] = bounds;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      throw invalidArgument(`settings.${name}: must be an integer from ${min} to ${max}, got ${describe(value)}`);
    }
  }
}

/** The placement policy has the whole shape (`validatePlacementPolicy`); otherwise every problem on one line. */
export function checkPlacementPolicy(policy: ServicePlacementPolicy): void {
  const result = validatePlacementPolicy(policy);
  if (!result.ok) throw invalidArgument(`servicePlacementPolicy: ${result.errors.join('; ')}`);
}

/** `name` and `hookUrl` of a new webhook are non-empty, `hookUrl` an http(s) URL. */
export function checkWebhookParams(params: Partial<CreateWebhookParams>, required: boolean): void {
  for (const field of ['name', 'hookUrl'] as const) {
    const value = params[field];
    if (value === undefined && !required) continue;
    if (typeof value !== 'string' || value.trim() === '')
      throw invalidArgument(`${field}: must be a non-empty string, got ${describe(value)}`);
  }
  if (params.hookUrl !== undefined && !/^https?:\/\/[^\s]+$/i.test(params.hookUrl)) {
    throw invalidArgument(`hookUrl: must be an http or https URL, got ${describe(params.hookUrl)}`);
  }
}
