import type { LayerInfo } from '../arcgis-request/layer-info.js';
import type { ServiceSession } from '../arcgis-request/service-session.js';
import type { ChangeFilters } from '../config/types.js';
import type { AttachmentLinkOf, AttachmentParents, LayerAttachmentChanges } from './attachment-changes.js';
import type { TrackedFields } from './build-change-events.js';
import type { ChangeEvent, ChangeSource } from './change-event.js';
import type { PreviousValuesStore, PreviousValuesWrite } from './previous-values.js';

/** A range to resolve: a scope's generations in `(from, to]`, at its service. */
export interface RangeToResolve {
  hook: string;
  scope: string;
  serviceUrl: URL;
  from: number;
  to: number;
}

/** What resolving a range needs besides the range. */
export interface ResolveContext {
  session: ServiceSession;
  previous: PreviousValuesStore;
  prefix: string;
  track: TrackedFields;
  origin: ChangeSource['origin'];
  /** The ArcGIS Online organization, when the service is one of its. */
  orgId?: string;
  /** The layers followed; every one when undefined. */
  layers?: readonly number[];
  /** The service's filters: pushed down to `extractChanges` where the server can, evaluated here where it cannot. */
  filters?: ChangeFilters;
  /**
   * `metadata`: creates and updates carry their feature's attachment changes in the range; `link`: each with the URL
   * `attachmentLink` makes. @defaultValue 'none'
   */
  attachments?: 'none' | 'metadata' | 'link';
  /** With `attachments: "link"`: makes an attachment's signed geohook URL. */
  attachmentLink?: AttachmentLinkOf;
  /** Ask for the attachment changes, for {@link OpenedRange.attachmentChanges} (the mirror), whatever `attachments` says. */
  attachmentLists?: boolean;
  /** Where the parents of attachments are kept, by the layer's previous-values scope (`<scope>#<layer>`). */
  attachmentParents?: (layerScope: string) => AttachmentParents;
  /** Each layer's field names as last resolved, by layer scope (`<scope>#<layer>`); none for a layer never resolved. */
  knownSchemas: (layerScopes: string[]) => Promise<(string[] | undefined)[]>;
}

/** Change events `[from, to)` of a range, and what the previous-values store learns from them, by key. */
export interface RangeBatch {
  events: ChangeEvent[];
  writes: { key: string; writes: PreviousValuesWrite[] }[];
}

/** A range opened for reading: how many change events it holds, read a batch at a time in transaction order. */
export interface OpenedRange {
  /** Every change event of the range: `transaction.total`. */
  total: number;
  /** Events `[from, to)`, built with the previous values kept now. */
  events(from: number, to: number): Promise<RangeBatch>;
  /** Each layer's field names as now read, by the layer's previous-values scope (`<scope>#<layer>`). */
  schemas: Map<string, string[]>;
  /** The layers of the range, as now read (relay routes' `where` clauses read their fields). */
  layers: readonly LayerInfo[];
  /** A server that answers ids only is read up to now: the generation it was read to, where the next range starts. */
  readUpTo?: number;
  /** The range's attachment changes by layer; none when they were not asked for or the server cannot give them. */
  attachmentChanges(): Promise<Map<number, LayerAttachmentChanges>>;
  /** Once its events are written: the parents of the attachments it deleted are forgotten. */
  forgetDeletedAttachments(): Promise<void>;
  /** Lets go of the change file. */
  close(): Promise<void>;
}
