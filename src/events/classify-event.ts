import { featureChangeTypes } from '../arcgis/change-types.js';
import { isArcgisName } from '../arcgis/service-name.js';
import type { EventFamily, ServiceRef } from './envelope.js';

/** What a payload says about itself: its family, every event type it reports, and its service. */
export interface Classification {
  family: EventFamily;
  /** Every event type reported, in order, without repeats; `['unknown']` when none is recognised. */
  types: string[];
  service: ServiceRef;
}

type JsonObject = Record<string, unknown>;

const canonicalChangeType = new Map<string, string>(featureChangeTypes.map((name) => [name.toLowerCase(), name]));
const EVENT_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

const gpOutcomes: Record<string, string> = {
  succeeded: 'gp.job.succeeded',
  success: 'gp.job.succeeded',
  completed: 'gp.job.succeeded',
  failed: 'gp.job.failed',
  failure: 'gp.job.failed',
  timedout: 'gp.job.failed',
  cancelled: 'gp.job.canceled',
  canceled: 'gp.job.canceled',
};

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/** `esriJobSucceeded`, `JobSucceeded`, `succeeded`, `ESRI_JOB_CANCELLED`… → `gp.job.*`. */
function gpEventType(eventType: string): string | undefined {
  const word = eventType
    .toLowerCase()
    .replace(/[^a-z]/g, '')
    .replace(/^esri/, '')
    .replace(/^job/, '');
  return gpOutcomes[word];
}

/** The event-type strings of an `events` array: `[{eventType}]` (Enterprise) or `["…"]` (ArcGIS Online). */
function eventNames(item: JsonObject): string[] {
  const names: string[] = [];
  if (Array.isArray(item.events)) {
    for (const event of item.events) {
      const name = isObject(event) ? text(event.eventType) : text(event);
      if (name !== undefined) names.push(name);
    }
  }
  const legacy = text(item.changeType) ?? text(item.eventType);
  if (legacy !== undefined) names.push(legacy);
  return names;
}

/** A known trigger in its canonical spelling; a newer, well-formed one verbatim; anything else dropped. */
function featureEventType(eventType: string): string | undefined {
  const name = canonicalChangeType.get(eventType.toLowerCase()) ?? (EVENT_NAME.test(eventType) ? eventType : undefined);
  return name === undefined ? undefined : `feature.${name}`;
}

const SERVICE_TYPE = /^[A-Za-z]{1,32}$/;

/**
 * The service a payload item names. A folder or service name ArcGIS could not have made (markup, control
 * characters, spaces) makes it name none: such a name reaches no alert, terminal or Redis key.
 */
function serviceOf(item: JsonObject, fallbackType?: string): ServiceRef {
  const service: ServiceRef = {};
  const folderName = text(item.folderName);
  const serviceName = text(item.serviceName);
  if ((folderName !== undefined && !isArcgisName(folderName)) || (serviceName !== undefined && !isArcgisName(serviceName))) return service;
  const type = text(item.serviceType);
  const serviceType = type !== undefined && SERVICE_TYPE.test(type) ? type : fallbackType;
  if (folderName !== undefined) service.folderName = folderName;
  if (serviceName !== undefined) service.serviceName = serviceName;
  if (serviceType !== undefined) service.serviceType = serviceType;
  return service;
}

function unique(values: (string | undefined)[]): string[] {
  return [...new Set(values.filter((value): value is string => value !== undefined))];
}

function isGp(item: JsonObject): boolean {
  const serviceType = text(item.serviceType)?.toLowerCase();
  if (serviceType !== undefined) return serviceType === 'gpserver';
  return 'jobId' in item || 'statusURL' in item;
}

function isFeature(item: JsonObject): boolean {
  const serviceType = text(item.serviceType)?.toLowerCase();
  if (serviceType !== undefined) return serviceType === 'featureserver';
  return 'changesUrl' in item || 'layerId' in item;
}

const unknown = (service: ServiceRef = {}): Classification => ({ family: 'unknown', types: ['unknown'], service });

/**
 * Classifies a parsed delivery: a geoprocessing job outcome, feature-service change types (Enterprise
 * object or ArcGIS Online array), or `unknown`. Spelling of event types is tolerated (any case, with or
 * without the `esri` prefix); feature change types are returned in their canonical spelling.
 */
export function classifyEvent(payload: unknown): Classification {
  const items = Array.isArray(payload) ? payload.filter(isObject) : isObject(payload) ? [payload] : [];
  const first = items[0];
  if (first === undefined) return unknown();

  if (items.every(isGp)) {
    const types = unique(items.flatMap(eventNames).map(gpEventType));
    return types.length > 0 ? { family: 'gp', types, service: serviceOf(first, 'GPServer') } : unknown(serviceOf(first));
  }
  if (items.every(isFeature)) {
    const types = unique(items.flatMap(eventNames).map(featureEventType));
    return types.length > 0 ? { family: 'feature', types, service: serviceOf(first, 'FeatureServer') } : unknown(serviceOf(first));
  }
  return unknown(serviceOf(first));
}
