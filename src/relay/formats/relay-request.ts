/** What a format makes of an event: the headers and the exact body of one POST. */
export interface RelayRequest {
  /** Lowercase names; `content-type` always set. */
  headers: Record<string, string>;
  body: string;
}

/** The content type of every relay body. */
export const JSON_CONTENT_TYPE = 'application/json';
