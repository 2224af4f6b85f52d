import type { ChangeHead } from './routed-event.js';

/**
 * Where a change event's rows begin in its JSON: the change writer writes its head (id, type, op, hook, service,
 * layer, key) first, then `after` (build-change-events.ts). A quote inside a JSON string is always escaped, so the
 * first `,"after":` of the text is a key; the head's own objects have none, so it is the event's.
 */
const ROWS = ',"after":';

const HEAD_TYPES = new Set(['change.created', 'change.updated', 'change.deleted', 'change.read', 'change.schema']);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function isChangeHead(value: unknown): value is ChangeHead {
  if (!isObject(value) || typeof value.id !== 'string' || typeof value.type !== 'string' || !HEAD_TYPES.has(value.type)) return false;
  if (value.type !== 'change.schema' && typeof value.op !== 'string') return false;
  const { service, layer, key } = value;
  return typeof value.hook === 'string' && isObject(service) && isObject(layer) && typeof layer.id === 'number' && isObject(key);
}

/**
 * The head of a change event from its JSON as the log holds it, parsed without its rows (a row is most of an event);
 * undefined for anything else (a submission, a stored event, JSON written in another order), to be parsed whole.
 * Cut anywhere but at the top level, the text parses to nothing: a head is exactly the whole event's.
 */
export function parseChangeHead(data: string): ChangeHead | undefined {
  const at = data.indexOf(ROWS);
  if (at < 0) return undefined;
  try {
    const head = JSON.parse(`${data.slice(0, at)}}`) as unknown;
    return isChangeHead(head) ? head : undefined;
  } catch {
    return undefined;
  }
}
