import type { ExtractChangesProfile } from './features/extract-profiles.js';
import type { LayerDefinition } from './features/types.js';

/** The records the admin-API emulator keeps, besides the webhook records and settings of `src/arcgis/`. */

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
  /** Feature services: its layers and tables. @defaultValue one point layer named after the service */
  layers?: LayerDefinition[];
  /** Feature services: what `extractChanges` supports. @defaultValue 'enterprise-11' */
  extractChanges?: Exclude<ExtractChangesProfile, 'online'>;
}

/** What fired: a GP job outcome or a feature-service change. */
export type EmulatorEvent =
  | { kind: 'gp'; outcome: 'succeeded' | 'failed' | 'canceled'; jobId: string; taskName: string }
  | {
      kind: 'feature';
      /** The change types the edit made that the webhook asked for, in the order they were made. */
      changeTypes: readonly string[];
      layerId: number;
      /** The server generations `changesUrl` asks `extractChanges` for: `[the generation before the edit, the edit's]`. */
      serverGens: readonly [number, number];
    };

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
  /**
   * The header the signature was sent in (`x-service`; ArcGIS Online: `x-esriHook-Signature`); absent when
   * the webhook has no key, or signs an Online form in its field. The value is not kept.
   */
  signatureHeader?: string;
  attempts: DeliveryAttempt[];
  outcome: 'pending' | 'delivered' | 'failed';
}

/** A GP job the emulator fired, as its REST job resource reports it. */
export interface FiredJob {
  jobId: string;
  /** The service's key, `folder/name.GPServer`. */
  service: string;
  taskName: string;
  outcome: 'succeeded' | 'failed' | 'canceled';
  /** When it was fired, epoch ms of the emulator clock. */
  submitted: number;
}
