import type { Logger } from 'pino';
import type { AdminClient } from '../admin/types.js';
import type { ServicePlacementPolicy } from '../arcgis/placement-policy.js';
import type { ServiceName } from '../arcgis/service-name.js';
import type { WebhookSettings } from '../arcgis/webhook-settings.js';
import { messageOf } from '../errors.js';

/** The organisation settings and placement policies `GEOHOOK_CONFIG` asks registration to apply. */
export interface OrgConfig {
  /** Webhook settings (`settings/set`): needs an organisation administrator. */
  settings?: Readonly<Partial<WebhookSettings>> | undefined;
  /** Placement policies by service (`placementPolicy/edit`). */
  placement?: Readonly<Record<ServiceName, ServicePlacementPolicy>> | undefined;
}

/** True when there is something to apply. */
export function hasOrgConfig(config: OrgConfig): boolean {
  return (config.settings !== undefined && Object.keys(config.settings).length > 0) || Object.keys(config.placement ?? {}).length > 0;
}

/**
 * Applies the settings, then each placement policy, through the admin client. Each failure is logged and
 * returned as one reason (`settings: …`, `placement <service>: …`); the others are still applied.
 */
export async function applyOrgConfig(client: AdminClient, config: OrgConfig, log: Logger): Promise<string[]> {
  const failed: string[] = [];
  if (config.settings !== undefined && Object.keys(config.settings).length > 0) {
    try {
      await client.settings.set({ ...config.settings });
      log.info({ settings: config.settings }, 'organisation webhook settings applied');
    } catch (err) {
      log.error({ err }, 'organisation webhook settings not applied (they need an organisation administrator)');
      failed.push(`settings: ${messageOf(err)}`);
    }
  }
  for (const [service, policy] of Object.entries(config.placement ?? {})) {
    try {
      await client.placement.edit(service, policy);
      log.info({ service }, 'placement policy applied');
    } catch (err) {
      log.error({ err, service }, 'placement policy not applied');
      failed.push(`placement ${service}: ${messageOf(err)}`);
    }
  }
  return failed;
}
