import type { Webhook, WebhookSettings } from '../emulator/types.js';
import type { ServicePlacementPolicy } from './placement-policy.js';

export type { Webhook, WebhookSettings } from '../emulator/types.js';
export type { ServicePlacementPolicy } from './placement-policy.js';

/** How the client authenticates: a static token, or credentials exchanged for tokens renewed before expiry. */
export type AdminAuth =
  | { token: string }
  | {
      username: string;
      password: string;
      /** Where tokens come from. @defaultValue `${baseUrl}/generateToken` */
      tokenUrl?: string;
      /** Lifetime asked for each token, in minutes. @defaultValue 60 */
      expirationMinutes?: number;
    };

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

/** A service as `folder/name.Type` or `name.Type` (e.g. `Tools/Buffer.GPServer`). */
export type ServiceName = string;

/** Parameters of `webhooks/create` (and, all optional, of `edit`). */
export interface CreateWebhookParams {
  name: string;
  hookUrl: string;
  /** Feature services: the event triggers; an array is sent as a comma list. @defaultValue the server's, `*` */
  changeTypes?: string[] | string;
  signatureKey?: string;
  /** @defaultValue the server's, false */
  active?: boolean;
  /** @defaultValue the server's, 'application/json' */
  contentType?: 'application/json' | 'application/x-www-form-urlencoded';
  /** @defaultValue the server's, 'json' */
  payloadFormat?: 'json' | 'pjson';
  /** Feature services: the window for cataloguing events. */
  scheduleInfo?: object;
}

/** One element of `filteredServices` (spec "Service record"). */
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
    listOrganization(): Promise<Webhook[]>;
  };
  settings: { get(): Promise<WebhookSettings>; set(settings: Partial<WebhookSettings>): Promise<WebhookSettings> };
  placement: {
    get(service: ServiceName): Promise<ServicePlacementPolicy>;
    edit(service: ServiceName, policy: ServicePlacementPolicy, options?: { async?: boolean }): Promise<void>;
  };
  findServices(filters?: FindServicesFilters): Promise<ServiceRecord[]>;
  updateDefinition(service: ServiceName, definition: { capabilities?: string; syncEnabled?: boolean } & Record<string, unknown>): Promise<void>;
}
