import { hash } from 'node:crypto';
import { formatServiceName } from '../arcgis/service-name.js';
import { serviceNameOf } from '../events/service-activity.js';
import { isStoredEvent, type RoutedEvent, type RoutedHead } from '../fanout/routed-event.js';
import { REPLAY_HEADER } from '../relay/formats/relay-request.js';
import { relayData } from '../relay/relay-event.js';

/** What a broker is handed of one event: its id and type, its body, the values of the template placeholders, and its headers. */
export interface StreamMessage {
  /** The event id: `Nats-Msg-Id`, AMQP `message-id`. */
  id: string;
  type: string;
  /** The event JSON (docs/events.md; a stored event without its base64 `rawBody`, as relays send it), or what the route's transform made of it. */
  body: Buffer;
  /** Placeholder values, each one subject token. */
  tokens: Readonly<Record<'service' | 'layer' | 'op' | 'type', string>>;
  /** `geohook-event-id`, `geohook-event-type`, `geohook-service`, `geohook-layer`, `traceparent`; `geohook-replayed-at` on a replay. */
  headers: Record<string, string>;
}

/** A value as one subject or routing-key token: letters, digits, `_` and `-` only (`.`, `/`, `*`, `>`, `#` are syntax there). */
const token = (value: string): string => value.replace(/[^A-Za-z0-9_-]/g, '_') || '_';

/** The operation of an event: `c`, `u`, `d`, `r` for change events, `s` for a submission, else the type's last part. */
function opOf(event: RoutedHead): string {
  if (!isStoredEvent(event) && 'op' in event && event.op !== undefined && !/^change\.(entered|left)$/.test(event.type)) return event.op;
  if (event.type === 'change.submission') return 's';
  return event.type.slice(event.type.indexOf('.') + 1);
}

/**
 * The W3C `traceparent` of an event (version 00, sampled): its trace id and parent id are drawn from the event id,
 * so every try, every route and every receiver carry the same trace for one event.
 */
export function traceparentOf(eventId: string): string {
  const digest = hash('sha256', eventId, 'hex');
  return `00-${digest.slice(0, 32)}-${digest.slice(32, 48)}-01`;
}

/** What a route does to an event's message: the body its transform made, the time of a replay. */
export interface MessageOptions {
  /** JSON: a transform's result, or a change event's JSON as the log holds it (as read, bytes). @defaultValue the event JSON, made here */
  body?: string | Buffer | undefined;
  /** When the event was put back by `geohook relay replay` (ISO 8601): sent as `geohook-replayed-at`. */
  replayedAt?: string | undefined;
}

/** The message of an event for a stream route (docs/streams.md#messages); of a change event's head, with its body given. */
export function streamMessage(event: RoutedEvent, options?: MessageOptions): StreamMessage;
export function streamMessage(event: RoutedHead, options: MessageOptions & { body: string | Buffer }): StreamMessage;
export function streamMessage(event: RoutedHead, options: MessageOptions = {}): StreamMessage {
  const stored = isStoredEvent(event);
  const service = stored
    ? serviceNameOf(event)
    : formatServiceName(event.service.folderName, event.service.serviceName, event.service.serviceType);
  const layer = stored ? event.changes?.layerId : event.layer.id;
  const headers: Record<string, string> = {
    'geohook-event-id': event.id,
    'geohook-event-type': event.type,
    traceparent: traceparentOf(event.id),
  };
  if (service !== undefined) headers['geohook-service'] = service;
  if (layer !== undefined) headers['geohook-layer'] = String(layer);
  if (options.replayedAt !== undefined) headers[REPLAY_HEADER] = options.replayedAt;
  return {
    id: event.id,
    type: event.type,
    body: Buffer.isBuffer(options.body) ? options.body : Buffer.from(options.body ?? JSON.stringify(relayData(event as RoutedEvent))),
    tokens: {
      service: token(service ?? ''),
      layer: layer === undefined ? '_' : String(layer),
      op: token(opOf(event)),
      type: token(event.type),
    },
    headers,
  };
}

/** A subject or routing-key template with its placeholders filled (`geohook.<service>.<layer>.<op>`). */
export const renderTemplate = (template: string, tokens: StreamMessage['tokens']): string =>
  template.replace(/<(service|layer|op|type)>/g, (_match, name: keyof StreamMessage['tokens']) => tokens[name]);
