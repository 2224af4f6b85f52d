import type { FeatureChangeType } from '../arcgis/change-types.js';
import type { ChangesLocation } from '../arcgis/changes-url.js';
import type { FeaturePayloadItem, GpJobPayload } from '../arcgis/payload.js';

/** Which queue an event goes to. */
export type EventFamily = 'gp' | 'feature' | 'unknown';

/** Outcomes of a geoprocessing job that fire a webhook. */
export type GpEventType = 'gp.job.succeeded' | 'gp.job.failed' | 'gp.job.canceled';

/** `feature.<ChangeType>`; an event type the product adds later arrives verbatim. */
export type FeatureEventType = `feature.${FeatureChangeType}` | `feature.${string}`;

/**
 * How an event reached geohook: a webhook delivery, or, for feature services with change tracking, a range of
 * edits geohook fetched itself because no delivery covered it (docs/backfill.md).
 */
export type EventSource = 'webhook' | 'backfill' | 'poll';

/** The service a delivery is about, as far as the payload names it. */
export interface ServiceRef {
  folderName?: string;
  serviceName?: string;
  serviceType?: string;
}

/** What the stored form and the consumer's event share. */
export interface EventFields {
  /** Lowercase hex SHA-256 of the raw body. */
  id: string;
  /** Hook name (`default`, or one from GEOHOOK_CONFIG). */
  hook: string;
  /** `types[0]`. */
  type: string;
  /** Every event type the delivery reports, in order, without repeats. */
  types: string[];
  family: EventFamily;
  /** ISO 8601 time the receiver accepted the delivery. */
  receivedAt: string;
  service: ServiceRef;
  /** Media type without parameters. */
  contentType: string;
  /** True when a signature was checked and matched. */
  verified: boolean;
  /**
   * Feature events: where the edits are, the `changesUrl` decoded with its `serverGens` range and the layer
   * named (of the first item of an ArcGIS Online array), and whether geohook trusts its URL. Absent when the
   * payload has no such `changesUrl`.
   */
  changes?: EventChanges;
}

/** A feature event's `changes` (docs/events.md#changes): the payload's `changesUrl`, read, and whether geohook trusts it. */
export interface EventChanges extends ChangesLocation {
  /**
   * True when `url` is under a URL geohook trusts on the event's hook (ADMIN_URL's site, TRUSTED_ORIGINS, the hook's
   * `trustedOrigins`); false when the payload named another origin, which geohook never calls (nor should a receiver).
   */
  trusted: boolean;
}

/** An event as consumers get it (docs/events.md): the stored fields, the parsed payload and the raw bytes. */
export interface GeohookEvent extends EventFields {
  /** How it reached geohook (`webhook` for every delivery). */
  source: EventSource;
  /** The parsed body (form fields decoded; a field holding JSON parsed). */
  payload: unknown;
  /** Base64 of the exact bytes received. */
  rawBody: string;
}

/**
 * An event as it is stored, the job data of every geohook queue (docs/events.md#the-stored-form): the exact
 * bytes once, as text, and the payload only where it is not simply the body parsed as JSON.
 */
export interface StoredEvent extends EventFields {
  /** How `body` holds the bytes: `utf8` when they are valid UTF-8 (every JSON delivery), else `base64`. */
  bodyEncoding: 'utf8' | 'base64';
  /** The exact bytes received. */
  body: string;
  /** Form deliveries only: the fields decoded, a field holding JSON parsed, signature fields left out. */
  payload?: unknown;
  /** Absent for webhook deliveries; `backfill` or `poll` for events geohook made from `extractChanges`. */
  source?: Exclude<EventSource, 'webhook'>;
}

/** A geoprocessing job event. */
export interface GpEvent extends GeohookEvent {
  family: 'gp';
  type: GpEventType;
  payload: GpJobPayload | GpJobPayload[];
}

/** A feature-service event: one object (Enterprise) or an array of items (ArcGIS Online). */
export interface FeatureEvent extends GeohookEvent {
  family: 'feature';
  type: FeatureEventType;
  payload: FeaturePayloadItem | FeaturePayloadItem[];
}

/** A verified delivery that is neither a GP job nor a feature-service event. */
export interface UnknownEvent extends GeohookEvent {
  family: 'unknown';
  type: 'unknown';
}

/** Any geohook event, narrowed by `family` (or `type`). */
export type AnyGeohookEvent = GpEvent | FeatureEvent | UnknownEvent;
