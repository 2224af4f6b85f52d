import {
  defaultOnlineWebhookSettings,
  defaultWebhookSettings,
  type OnlineWebhookSettings,
  type WebhookSettings,
} from '../arcgis/webhook-settings.js';
import type { OnlineWebhook, Webhook } from '../arcgis/webhook.js';
import { AdminError } from './admin-error.js';
import { FeatureStore } from './features/feature-store.js';
import { FiredHistory } from './rest-history.js';
import type { CatalogService } from './types.js';

/** `folder/name.Type`, the key of a service. */
export const serviceKey = (service: CatalogService): string => `${service.folderName}/${service.serviceName}.${service.type}`;

/**
 * The emulator's state: the catalogue (with its mutable definitions), webhooks, settings, placement, and the
 * features of its feature services, and the GP jobs and extract jobs the REST resources report.
 */
export class EmulatorStore {
  readonly services: CatalogService[];
  readonly webhooks = new Map<string, Webhook>();
  readonly placementPolicies = new Map<string, unknown>();
  readonly history = new FiredHistory();
  /** Every feature service's layers and features, and the server generation counter. */
  readonly features = new FeatureStore();
  settings: WebhookSettings = { ...defaultWebhookSettings };
  /** The ArcGIS Online organization's hosted feature layer webhooks, by globalId, and their settings. */
  readonly onlineWebhooks = new Map<string, OnlineWebhook>();
  onlineSettings: OnlineWebhookSettings = { ...defaultOnlineWebhookSettings };

  constructor(catalog: readonly CatalogService[]) {
    this.services = catalog.map((service) => ({ ...service }));
  }

  /**
   * The service `name.Type`, in `folder` when given; 404 when there is none, 400 when the name without a
   * folder is ambiguous.
   */
  service(folder: string | undefined, nameAndType: string): CatalogService {
    const dot = nameAndType.lastIndexOf('.');
    const name = dot === -1 ? nameAndType : nameAndType.slice(0, dot);
    const type = dot === -1 ? '' : nameAndType.slice(dot + 1);
    const found = this.services.filter(
      (service) =>
        service.serviceName === name &&
        service.type.toLowerCase() === type.toLowerCase() &&
        (folder === undefined || service.folderName === folder),
    );
    const label = folder === undefined ? nameAndType : `${folder}/${nameAndType}`;
    if (found.length === 0) throw new AdminError(404, `Service '${label}' does not exist.`);
    if (found.length > 1)
      throw new AdminError(400, `Service name '${nameAndType}' is in several folders: address it as <folder>/${nameAndType}.`);
    return found[0]!;
  }

  /**
   * A hosted feature service of the ArcGIS Online organization, by name (Online has no folders): the
   * catalogue's hosted feature services, but those with branch-versioned data; 404 for any other name.
   */
  onlineService(name: string): CatalogService {
    const found = this.services.find(
      (service) =>
        service.serviceName === name && service.type === 'FeatureServer' && service.hosted === true && service.branchVersioned !== true,
    );
    if (found === undefined) throw new AdminError(404, `Service '${name}' does not exist in the organization.`);
    return found;
  }

  webhooksOf(service: CatalogService): Webhook[] {
    return [...this.webhooks.values()].filter(
      (hook) => hook.folderName === service.folderName && hook.serviceName === service.serviceName && hook.serviceType === service.type,
    );
  }

  /** The webhook `id` of `service`, or 404. */
  webhook(service: CatalogService, id: string): Webhook {
    const hook = this.webhooks.get(id);
    if (hook === undefined || hook.serviceName !== service.serviceName || hook.folderName !== service.folderName) {
      throw new AdminError(404, `Webhook '${id}' does not exist on service '${service.serviceName}.${service.type}'.`);
    }
    return hook;
  }
}
