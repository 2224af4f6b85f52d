import { GeohookError } from '../errors.js';
import { compileWildcards } from './wildcards.js';

/** A service as `folder/name.Type` or `name.Type` (e.g. `Tools/Buffer.GPServer`). */
export type ServiceName = string;

/**
 * The service names geohook's configuration accepts (REGISTER, `placement`): letters, digits, `-` and `_`,
 * with an optional folder. The admin client is more lenient and encodes whatever a server may hold.
 */
export const configuredServiceName = /^([A-Za-z0-9_-]+\/)?[A-Za-z0-9_-]+\.[A-Za-z]+Server$/;

/** True for an entry of REGISTER with a `*` or `?`: it names the services of the catalogue it matches. */
export const isPattern = (entry: string): boolean => /[*?]/.test(entry);

/**
 * The pattern as a test of service names: `*` stands for any characters, `/` included (`*.FeatureServer` is every
 * feature service, in any folder), `?` for one character; the rest is literal. It reads a name in time
 * proportional to its length (no backtracking regular expression: names come from the server).
 */
export const patternMatcher = (pattern: string): ((service: ServiceName) => boolean) => compileWildcards(pattern, { many: '*', one: '?' });

/** What REGISTER accepts: a configured service name, or a pattern of them with `*` or `?` (`Hosted/*`, `*.FeatureServer`). */
export const registerPattern = /^(?:([A-Za-z0-9_-]+\/)?[A-Za-z0-9_-]+\.[A-Za-z]+Server|(?=[^/]*\/?[^/]*$)(?=.*[*?])[A-Za-z0-9_*?./-]+)$/;

/**
 * A folder or service name as ArcGIS makes them: letters (any script), digits, `_` and `-`. A payload naming
 * anything else names no service geohook tracks or reports (docs/events.md#the-envelope).
 */
const ARCGIS_NAME = /^[\p{L}\p{N}_-]{1,128}$/u;

/** True for a folder or service name ArcGIS could have made (see {@link ARCGIS_NAME}). */
export const isArcgisName = (value: string): boolean => ARCGIS_NAME.test(value);

const invalidArgument = (message: string): GeohookError => new GeohookError('GEOHOOK_ERR_ADMIN_INVALID', message);

/** A service name taken apart. */
export interface ParsedServiceName {
  folder: string | undefined;
  name: string;
  /** The service type, such as `GPServer`. */
  type: string;
  /** `services/<folder>/<name>.<Type>` (or without the folder), each segment URL-encoded. */
  path: string;
}

const SERVICE_NAME = /^(?:([^/]+)\/)?([^/]+)\.([A-Za-z]+Server)$/;

/** Parses `folder/name.Type` or `name.Type`; anything else (a name without `.Type`) is `GEOHOOK_ERR_ADMIN_INVALID`. */
export function parseServiceName(service: ServiceName): ParsedServiceName {
  const match = typeof service === 'string' ? SERVICE_NAME.exec(service.trim()) : null;
  if (match === null) {
    throw invalidArgument(`service: must be folder/name.Type or name.Type (e.g. Tools/Buffer.GPServer), got ${JSON.stringify(service)}`);
  }
  const [, folder, name, type] = match as unknown as [string, string | undefined, string, string];
  const segments = [...(folder === undefined ? [] : [folder]), `${name}.${type}`].map(encodeURIComponent);
  return { folder, name, type, path: `services/${segments.join('/')}` };
}

/** `services/<folder>/<name>/FeatureServer/updateDefinition`; only feature services have one. */
export function updateDefinitionPath(service: ServiceName): string {
  const { folder, name, type } = parseServiceName(service);
  if (type !== 'FeatureServer') throw invalidArgument(`service: updateDefinition applies to FeatureServer services only, got ${type}`);
  const segments = [...(folder === undefined ? [] : [folder]), name].map(encodeURIComponent);
  return `services/${segments.join('/')}/FeatureServer/updateDefinition`;
}

/** `<service path>/webhooks/<id>`; an empty id is refused. */
export function webhookPath(service: ServiceName, id: string): string {
  if (typeof id !== 'string' || id.trim() === '') throw invalidArgument('id: must be a non-empty webhook id');
  return `${parseServiceName(service).path}/webhooks/${encodeURIComponent(id)}`;
}

/** `folder/name.Type`, or `name.Type` without a folder (as payloads name them: `''` is none); `undefined` without a name. */
export function formatServiceName(folder: string | undefined, name: string | undefined, type: string): ServiceName | undefined {
  if (name === undefined || name === '') return undefined;
  return `${folder === undefined || folder === '' ? '' : `${folder}/`}${name}.${type}`;
}
