import secureJson from 'secure-json-parse';
import { jsonNestingExceeds, MAX_NESTING } from '../arcgis/payload.js';
import { GeohookError } from '../errors.js';

const tooDeep = (what: string, levels: number): GeohookError =>
  new GeohookError('GEOHOOK_ERR_BAD_PAYLOAD', `${what} nests arrays or objects deeper than ${levels} levels`);

/** `text` parsed as Fastify parses JSON: keys `__proto__` and `constructor.prototype` are refused. */
const parseJson = (text: string): unknown => secureJson.parse(text, { protoAction: 'error', constructorAction: 'error' });

/**
 * The JSON body of a delivery whose signature was checked: its nesting bounded first by a scan of the bytes
 * (docs/receiver.md#limits), then parsed. Throws `GEOHOOK_ERR_BAD_PAYLOAD` for a body too deep or not JSON.
 */
export function parseJsonBody(raw: Buffer): unknown {
  if (jsonNestingExceeds(raw, MAX_NESTING)) throw tooDeep('the body', MAX_NESTING);
  try {
    return parseJson(raw.toString('utf8'));
  } catch (err) {
    throw new GeohookError('GEOHOOK_ERR_BAD_PAYLOAD', `the body is not valid application/json: ${(err as Error).message}`);
  }
}

const JSON_START = /^\s*[[{]/;

/**
 * A form field's value: parsed when it holds JSON (ArcGIS Online's `payload`), else the text. The fields sit
 * one level down in the payload, so a field may nest one level less than a JSON body.
 */
export function parseFormField(value: string): unknown {
  if (!JSON_START.test(value)) return value;
  if (jsonNestingExceeds(value, MAX_NESTING - 1)) throw tooDeep('a form field', MAX_NESTING);
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}
