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
}

/** What fired: a GP job outcome or a feature-service change. */
export type EmulatorEvent =
  | { kind: 'gp'; outcome: 'succeeded' | 'failed' | 'canceled'; jobId: string; taskName: string }
  | {
      kind: 'feature';
      changeType: string;
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

/** What an edit did to one feature: the `extractChanges` list it lands in. */
export type FeatureChange = 'adds' | 'updates' | 'deleteIds';

/** A feature-service edit the emulator fired, as `extractChanges` reports it. */
export interface FiredEdit {
  /** The service's key, `folder/name.FeatureServer`. */
  service: string;
  layerId: number;
  changeType: string;
  /** When the edit was made (epoch ms): `events[0].when` of the payload. */
  when: number;
  /** The server generation of the edit (`when + 1`): `serverGens=[from,to]` selects it when `from < serverGen <= to`. */
  serverGen: number;
  /** The service's generation before the edit (its previous edit's, or `when` for its first): ArcGIS Enterprise's `serverGens[0]`. */
  serviceGenBefore: number;
  /** The layer's generation before the edit (its previous edit's, or `when` for its first): ArcGIS Online's `serverGens[0]`. */
  layerGenBefore: number;
  /** The feature it touched; none for attachment and schema changes. */
  feature?: { change: FeatureChange; objectId: number };
}

/** What an `extractChanges` call asks for. */
export interface ChangesQuery {
  serverGens: readonly [from: number, to: number];
  /** Layer ids; undefined means every layer with edits in the range. */
  layers: readonly number[] | undefined;
  returnInserts: boolean;
  returnUpdates: boolean;
  returnDeletes: boolean;
  /** `returnIdsOnly`: each layer's `objectIds: {adds, updates, deletes}` in place of its features. */
  returnIdsOnly: boolean;
}

/** An asynchronous `extractChanges` (`async=true`): its status URL answers once `InProgress`, then `Completed`. */
export interface ExtractJob {
  id: string;
  service: string;
  query: ChangesQuery;
  submitted: number;
  /** Status requests answered so far. */
  polls: number;
}
