import type { AdminAuth } from '../arcgis/admin-auth.js';
import type { ServicePlacementPolicy } from '../arcgis/placement-policy.js';
import type { ServiceName } from '../arcgis/service-name.js';
import type { WebhookSettings } from '../arcgis/webhook-settings.js';
import type { CreateWebhookParams, Webhook } from '../arcgis/webhook.js';

/** Options of `createAdminClient`. */
export interface AdminClientOptions {
  /** `{base_url}`, e.g. http://127.0.0.1:7080/arcgis/admin (trailing slash tolerated). */
  baseUrl: string;
  /** A static token, or credentials exchanged at tokenUrl (default `${baseUrl}/generateToken`) and renewed before expiry. @defaultValue no token is sent */
  auth?: AdminAuth;
  /** @defaultValue globalThis.fetch */
  fetch?: typeof fetch;
  /** Per-request timeout, body included. @defaultValue 30000 */
  timeoutMs?: number;
  /** Retry schedule for idempotent reads on network errors and 5xx. @defaultValue { delaysMs: [200, 1000, 3000] } */
  retry?: { delaysMs: readonly number[] };
}

/** One element of `filteredServices` (the admin API's service record). */
export interface ServiceRecord {
  id: string;
  serviceName: string;
  type: string;
  folderName: string;
  description?: string;
  capabilities?: string;
  provider?: string;
  clusterName?: string;
  configuredState?: string;
  properties?: Record<string, unknown>;
  jsonProperties?: Record<string, unknown>;
  portalProperties?: Record<string, unknown>;
  [key: string]: unknown;
}

/** The filters of `findServices`; each maps to its `filter…` parameter. */
export interface FindServicesFilters {
  folderName?: string;
  serviceName?: string;
  serviceType?: string;
  serviceId?: string;
  provider?: string;
}

/** The admin API of one deployment. */
export interface AdminClient {
  /** Which product the admin root is: ArcGIS Enterprise (and the emulator's server), or an ArcGIS Online organization. */
  readonly product: 'enterprise' | 'online';
  webhooks: {
    create(service: ServiceName, params: CreateWebhookParams): Promise<Webhook>;
    list(service: ServiceName, page?: { start?: number; num?: number }): Promise<{ webhooks: Webhook[]; nextStart: number }>;
    listAll(service: ServiceName): Promise<Webhook[]>;
    get(service: ServiceName, id: string): Promise<Webhook>;
    edit(service: ServiceName, id: string, params: Partial<CreateWebhookParams>): Promise<Webhook>;
    delete(service: ServiceName, id: string): Promise<void>;
    activateAll(service: ServiceName): Promise<void>;
    deactivateAll(service: ServiceName): Promise<void>;
    deleteAll(service: ServiceName): Promise<void>;
    notificationStatus(service: ServiceName, id: string): Promise<{ invoked: boolean; invokedTimestamp: number }[]>;
    /**
     * ArcGIS Online's `status` operation: the server POSTs its test payload (`events: ["NoContent"]`) to the
     * webhook's hookUrl, signed like a delivery. ArcGIS Enterprise has no such operation.
     */
    ping(service: ServiceName, id: string): Promise<void>;
    listOrganization(): Promise<Webhook[]>;
  };
  settings: { get(): Promise<WebhookSettings>; set(settings: Partial<WebhookSettings>): Promise<WebhookSettings> };
  placement: {
    get(service: ServiceName): Promise<ServicePlacementPolicy>;
    edit(service: ServiceName, policy: ServicePlacementPolicy, options?: { async?: boolean }): Promise<void>;
  };
  findServices(filters?: FindServicesFilters): Promise<ServiceRecord[]>;
  /** The admin root itself (`{base_url}?f=json`): `currentVersion` and the resources. */
  info(): Promise<{ currentVersion?: number | string } & Record<string, unknown>>;
  updateDefinition(
    service: ServiceName,
    definition: { capabilities?: string; syncEnabled?: boolean } & Record<string, unknown>,
  ): Promise<void>;
}
