/** What a format makes of an event: the headers and the exact body of one POST. */
export interface RelayRequest {
  /** Lowercase names; `content-type` always set. */
  headers: Record<string, string>;
  body: string;
}

/** The content type of every relay body. */
export const JSON_CONTENT_TYPE = 'application/json';

/**
 * The header of a try of an event put back by hand (`geohook relay replay`): when, ISO 8601. It is not signed (Standard
 * Webhooks signs the id, timestamp and body, which stay the event's), so it tells a replay apart, never proves one.
 */
export const REPLAY_HEADER = 'geohook-replayed-at';
