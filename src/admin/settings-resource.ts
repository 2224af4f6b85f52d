import type { WebhookSettings } from '../arcgis/webhook-settings.js';
import type { AdminRequest } from './admin-request.js';
import { withoutStatus } from './read-answer.js';
import type { AdminClient } from './types.js';
import { validateSettings } from './validate-input.js';

const SETTINGS_PATH = 'services/webhooks/settings';

/**
 * The organisation-wide delivery settings (organisation administrators). `get` sends no setting, so the
 * server changes nothing and echoes the current values; `set` checks the bounds before sending.
 */
export function createSettingsResource(request: AdminRequest): AdminClient['settings'] {
  return {
    async get() {
      return withoutStatus<WebhookSettings>(await request.send(SETTINGS_PATH, {}, { idempotent: true }));
    },
    async set(settings) {
      validateSettings(settings);
      return withoutStatus<WebhookSettings>(await request.send(SETTINGS_PATH, { ...settings }, { idempotent: false }));
    },
  };
}
