import { formatServiceName, isArcgisName, type ServiceName } from '../arcgis/service-name.js';

/** The bytes of a refused body looked at: the product's payloads name their service in their first fields. */
const PEEK_BYTES = 4096;

/** A string field of the JSON text, when it is an ArcGIS name. */
function nameField(text: string, field: string): string | undefined {
  const value = new RegExp(`"${field}"\\s*:\\s*"([^"\\\\]{1,128})"`).exec(text)?.[1];
  return value !== undefined && isArcgisName(value) ? value : undefined;
}

/**
 * The service a delivery whose signature did not verify says it is from, for the line that reports it: a look at
 * its first bytes, JSON or a form's encoded fields, without parsing them (nothing is parsed before a signature
 * verifies); undefined when it names none.
 */
export function claimedService(raw: Buffer): ServiceName | undefined {
  let text = raw.subarray(0, PEEK_BYTES).toString('latin1');
  if (!/^\s*[[{]/.test(text)) {
    try {
      text = decodeURIComponent(text.replace(/\+/g, ' '));
    } catch {
      return undefined; // cut in the middle of an escape, or not a form
    }
  }
  const serviceName = nameField(text, 'serviceName');
  if (serviceName === undefined) return undefined;
  const type =
    nameField(text, 'serviceType') ?? (text.includes('"changesUrl"') ? 'FeatureServer' : text.includes('"jobId"') ? 'GPServer' : '');
  return type === '' ? serviceName : formatServiceName(nameField(text, 'folderName'), serviceName, type);
}
