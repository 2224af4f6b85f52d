/**
 * Every error geohook reports carries a stable `GEOHOOK_ERR_*` code. The code, its HTTP status and its
 * meaning live in one registry so that the receiver, the CLI and the README agree.
 */
export const errorCodes = {
  GEOHOOK_ERR_CONFIG: { statusCode: 500, summary: 'A configuration value is invalid; start-up stops.' },
  GEOHOOK_ERR_BAD_SIGNATURE: { statusCode: 401, summary: 'The signature does not match any key of the hook.' },
  GEOHOOK_ERR_MISSING_SIGNATURE: { statusCode: 401, summary: 'The hook has keys but the delivery carries no signature.' },
  GEOHOOK_ERR_UNSIGNED_NOT_ALLOWED: {
    statusCode: 401,
    summary: 'The hook has no key and REQUIRE_SIGNATURE is true, so unsigned deliveries are refused.',
  },
  GEOHOOK_ERR_BAD_PAYLOAD: { statusCode: 400, summary: 'The signature is fine but the body does not parse in its content type.' },
  GEOHOOK_ERR_UNKNOWN_HOOK: { statusCode: 404, summary: 'No hook of that name is configured.' },
  GEOHOOK_ERR_BODY_TOO_LARGE: { statusCode: 413, summary: 'The body is larger than MAX_BODY_BYTES.' },
  GEOHOOK_ERR_UNSUPPORTED_MEDIA_TYPE: {
    statusCode: 415,
    summary: 'The content type is neither application/json nor application/x-www-form-urlencoded.',
  },
  GEOHOOK_ERR_MISSING_CRC_TOKEN: { statusCode: 400, summary: 'A challenge GET came without a crc_token.' },
  GEOHOOK_ERR_BAD_CRC_TOKEN: {
    statusCode: 400,
    summary: 'A challenge GET carries a crc_token that is not 1 to 256 letters, digits or the characters . _ ~ + / = -.',
  },
  GEOHOOK_ERR_NO_CRC_KEY: {
    statusCode: 404,
    summary: 'A challenge GET names a hook that has no key to answer with, or whose challenges are turned off (crc: false).',
  },
  GEOHOOK_ERR_INVALID_WHERE: {
    statusCode: 400,
    summary: "A where clause (a change-events filter) is not one ArcGIS's standardized SQL subset reads, or names a field the layer lacks.",
  },
  GEOHOOK_ERR_FILTER_CANNOT_MATCH: {
    statusCode: 400,
    summary:
      "A relay route's or subscription's filter cannot match the layers it is for: a field they lack, a value its field cannot hold, or a field geohook does not track.",
  },
  GEOHOOK_ERR_QUEUE_UNAVAILABLE: {
    statusCode: 503,
    summary: 'Redis did not answer in time (an event was not stored, or a queue command could not reach it); retry later.',
  },
  GEOHOOK_ERR_DURABILITY: {
    statusCode: 503,
    summary:
      'DURABILITY=strict cannot be kept by this Redis (it needs WAITAOF, Redis 7.2+, or appendfsync always): deliveries get 503 and /readyz says why.',
  },
  GEOHOOK_ERR_NOT_FOUND: { statusCode: 404, summary: 'No such route.' },
  GEOHOOK_ERR_REQUEST_TIMEOUT: {
    statusCode: 408,
    summary:
      'The client did not send its headers within timeouts.headersMs, or its whole request within timeouts.requestMs; the connection is closed.',
  },
  GEOHOOK_ERR_HEADERS_TOO_LARGE: {
    statusCode: 431,
    summary: "The request's headers are larger than Node's limit (16 KiB); the connection is closed.",
  },
  GEOHOOK_ERR_BAD_REQUEST: { statusCode: 400, summary: 'The bytes received are not a valid HTTP/1.1 request; the connection is closed.' },
  GEOHOOK_ERR_INTERNAL: { statusCode: 500, summary: 'An unexpected error; the event was not acknowledged.' },
  GEOHOOK_ERR_REDIS_SERVER: { statusCode: 500, summary: 'The embedded redis-server could not be started.' },
  GEOHOOK_ERR_REDIS_AUTH: {
    statusCode: 500,
    summary:
      'Redis refused the password of the connection (NOAUTH: none given, WRONGPASS: a wrong one): give it in REDIS_URL; beside a running geohook up, its URL is in .geohook/redis/url.',
  },
  GEOHOOK_ERR_PORT_IN_USE: { statusCode: 500, summary: 'A port geohook was to listen on is in use; start-up stops.' },
  GEOHOOK_ERR_SEND_FAILED: { statusCode: 500, summary: '`geohook send` could not deliver (network error or non-2xx answer).' },
  GEOHOOK_ERR_ADMIN_API: {
    statusCode: 502,
    summary: 'The admin API answered with an error (in either body shape, or a non-2xx or non-JSON answer), or could not be reached.',
  },
  GEOHOOK_ERR_ADMIN_AUTH: { statusCode: 401, summary: 'The admin API refused the token (498 invalid or expired, 499 missing).' },
  GEOHOOK_ERR_REGISTRATION: {
    statusCode: 503,
    summary:
      'Self-registration could not ensure a webhook (a service in REGISTER is missing, or the lock stayed busy); retried with backoff.',
  },
  GEOHOOK_ERR_ADMIN_INVALID: { statusCode: 400, summary: 'An admin client argument is invalid; nothing was sent.' },
  GEOHOOK_ERR_DASHBOARD_AUTH: {
    statusCode: 401,
    summary: 'A dashboard request (`/ui`) lacks valid credentials, or a change to the queues came from a page of another origin.',
  },
  GEOHOOK_ERR_DASHBOARD_READ_ONLY: {
    statusCode: 403,
    summary:
      'The dashboard does not make this change to the queues: `dashboard.changes` allows retrying, removing and promoting jobs (`jobs`, the default), no change (`none`), or every change (`all`).',
  },
  GEOHOOK_ERR_DASHBOARD_RATE_LIMITED: {
    statusCode: 429,
    summary: 'Too many wrong dashboard credentials came from this address: its next attempt must wait the seconds of `Retry-After`.',
  },
  GEOHOOK_ERR_METRICS_AUTH: {
    statusCode: 401,
    summary: 'METRICS_TOKEN is set and a request for `/metrics` lacks `Authorization: Bearer <METRICS_TOKEN>`.',
  },
  GEOHOOK_ERR_FOLLOW_UP: {
    statusCode: 502,
    summary:
      'A follow-up fetch (fetchChanges, fetchJobResult) could not finish: the event has no usable http(s) URL, the server-side job failed, or the deadline passed.',
  },
  GEOHOOK_ERR_MIRROR_DATABASE: {
    statusCode: 503,
    summary:
      "The mirror's PostgreSQL (MIRROR_DATABASE_URL) could not be reached or refused a statement, or another geohook held the mirror's lock: the layer's table keeps its last generation and is brought up to date on the next try.",
  },
  GEOHOOK_ERR_MIRROR_POSTGIS: {
    statusCode: 500,
    summary:
      "PostGIS is not installed in the mirror's database and geohook may not install it (CREATE EXTENSION postgis needs the right to).",
  },
  GEOHOOK_ERR_MIRROR_GEOMETRY_LIMIT: {
    statusCode: 413,
    summary:
      "A feature's geometry is past the mirror's limits (1,000,000 vertices, 100,000 rings or paths, 20,000,000 steps to group a polygon's rings): the mirror refuses it, and the layer's table keeps its last generation until the feature is made smaller or deleted.",
  },
  GEOHOOK_ERR_MIRROR_TABLE_TAKEN: {
    statusCode: 409,
    summary:
      "A mirrored layer's table could not be made: every name it may take is a table geohook did not make or another layer's, or the table to copy into already exists. Nothing was written; the layer is tried again.",
  },
  GEOHOOK_ERR_UNTRUSTED_URL: {
    statusCode: 403,
    summary:
      "A URL an event names is not under a trusted URL (ADMIN_URL, TRUSTED_ORIGINS, hooks[].trustedOrigins, or allowedOrigins of fetchChanges/fetchJobResult), or a URL a trusted server's answer names (a job's `statusUrl` or `resultUrl`, a redirect of the result) is neither on that server's origin nor on signed storage (`https://*.arcgis.com`, or allowedStorage of the follow-up helpers): no request was sent to it.",
  },
  GEOHOOK_ERR_EVENT_NOT_FOUND: {
    statusCode: 404,
    summary:
      'No job of that event id is in a state to retry or replay: none at all (completed jobs are kept for completedJobs.ageSeconds), or one still pending, or (retry) one that has not failed.',
  },
  GEOHOOK_ERR_RELAY_DELIVERY: {
    statusCode: 502,
    summary:
      "A relay route did not take an event: it answered other than 2xx (a redirect included, never followed), or timed out, or could not be reached; the try is retried on the route's schedule.",
  },
  GEOHOOK_ERR_RELAY_UNKNOWN_ROUTE: {
    statusCode: 404,
    summary: 'No relay route of that name is in the relays of GEOHOOK_CONFIG (geohook relay replay --name, geohook relay test --route).',
  },
  GEOHOOK_ERR_RELAY_NOT_DEAD_LETTER: {
    statusCode: 404,
    summary:
      'An event id given to geohook relay replay is not a dead letter of the route: it was delivered, is still being tried, or the route never took it.',
  },
  GEOHOOK_ERR_STREAM_PUBLISH: {
    statusCode: 502,
    summary:
      "A stream route's broker did not take an event: NATS JetStream gave no acknowledgement, or RabbitMQ did not confirm it or returned it unroutable, or could not be reached; the publish is tried again in place, holding back the route's later events.",
  },
  GEOHOOK_ERR_RELAY_TRANSFORM: {
    statusCode: 500,
    summary:
      "A relay route's transform threw, ran past its bounds (10,000 steps, 1 s, a depth of 500, sequences of 100,000 items, a body of 1 MiB) or gave no JSON object for an event: that event is a dead letter of the route with this text, and the route goes on with the next.",
  },
  GEOHOOK_ERR_RELAY_TEST_INPUT: {
    statusCode: 404,
    summary:
      "geohook relay test found no event to try: --id names none kept in the route's queue, change-events or the event queues (completed jobs are kept for completedJobs.ageSeconds), or --file holds no JSON event.",
  },
  GEOHOOK_ERR_SUBSCRIPTION_EXISTS: {
    statusCode: 409,
    summary: 'geohook subscriptions create: a subscription of that name exists (delete it first, or choose another name).',
  },
  GEOHOOK_ERR_SUBSCRIPTION_UNKNOWN: {
    statusCode: 404,
    summary: 'No subscription of that name exists (geohook subscriptions list shows them).',
  },
  GEOHOOK_ERR_ATTACHMENT_LINK_INVALID: {
    statusCode: 403,
    summary:
      "An attachment link's token is malformed, its signature does not hold (altered, or signed with another key), or it names a service whose attachments are not linked; nothing is asked of the GIS server.",
  },
  GEOHOOK_ERR_ATTACHMENT_LINK_EXPIRED: {
    statusCode: 410,
    summary:
      "An attachment link's lifetime (attachmentLinks.lifetimeSeconds) is over; nothing is asked of the GIS server. A newer event of the feature carries a new link.",
  },
  GEOHOOK_ERR_ATTACHMENT_UNAVAILABLE: {
    statusCode: 502,
    summary:
      "An attachment link held, but the GIS server did not give the bytes: the attachment is gone, the server refused geohook's token, or it could not be reached.",
  },
  GEOHOOK_ERR_PORTAL_TOKEN: {
    statusCode: 401,
    summary:
      "A Survey123 webhook's token (portalInfo.token) was refused by the configured portal (wrong, expired, or another user's than userInfo names): nothing was closed.",
  },
  GEOHOOK_ERR_PORTAL_UNAVAILABLE: {
    statusCode: 503,
    summary:
      "A Survey123 webhook's token could not be checked: no portal is configured (PORTAL_URL), it did not answer, or the hook asked it too many checks at once (50, then 10 a second); Survey123 may send it again, the submission closes by its window meanwhile.",
  },
} as const satisfies Record<string, { statusCode: number; summary: string }>;

export type ErrorCode = keyof typeof errorCodes;

/** Base class of every error geohook throws on purpose. `code` is stable; `message` is for people. */
export class GeohookError extends Error {
  readonly code: ErrorCode;
  readonly statusCode: number;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'GeohookError';
    this.code = code;
    this.statusCode = errorCodes[code].statusCode;
  }
}

/** Raised while loading configuration; the message names the variable and what it allows. */
export class ConfigError extends GeohookError {
  constructor(message: string) {
    super('GEOHOOK_ERR_CONFIG', message);
    this.name = 'ConfigError';
  }
}

/** Raised when an event could not be stored in Redis; answered 503 with `Retry-After`. */
export class QueueUnavailableError extends GeohookError {
  readonly retryAfterSeconds: number;

  constructor(message: string, retryAfterSeconds: number, options?: { cause?: unknown }) {
    super('GEOHOOK_ERR_QUEUE_UNAVAILABLE', message, options);
    this.name = 'QueueUnavailableError';
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** Too many wrong dashboard credentials came from one address; answered 429 with `Retry-After`. */
export class DashboardRateLimitError extends GeohookError {
  readonly retryAfterSeconds: number;

  constructor(retryAfterSeconds: number) {
    super('GEOHOOK_ERR_DASHBOARD_RATE_LIMITED', `too many wrong credentials from this address: try again in ${retryAfterSeconds} s`);
    this.name = 'DashboardRateLimitError';
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** What an {@link AdminApiError} knows of the failed call. */
export interface AdminApiErrorDetails {
  /** The code the server reported (`code` of either error shape, else the HTTP status), when there is one. */
  serverCode: number | undefined;
  /** The server's messages (and details), or the reason the call failed. */
  messages: string[];
  /** The URL called, never with a token. */
  url: string;
  /** The parsed body (or the raw text when it was not JSON), with any token redacted. */
  response: unknown;
  cause?: unknown;
}

/** The admin API answered with an error, or could not be reached. The message is one line, without the token. */
export class AdminApiError extends GeohookError {
  readonly serverCode: number | undefined;
  readonly messages: string[];
  readonly url: string;
  readonly response: unknown;

  constructor(
    message: string,
    details: AdminApiErrorDetails,
    code: 'GEOHOOK_ERR_ADMIN_API' | 'GEOHOOK_ERR_ADMIN_AUTH' = 'GEOHOOK_ERR_ADMIN_API',
  ) {
    super(code, message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'AdminApiError';
    this.serverCode = details.serverCode;
    this.messages = details.messages;
    this.url = details.url;
    this.response = details.response;
  }
}

/** The admin API refused the token: 498 (invalid or expired) or 499 (missing). */
export class AdminAuthError extends AdminApiError {
  constructor(message: string, details: AdminApiErrorDetails) {
    super(message, details, 'GEOHOOK_ERR_ADMIN_AUTH');
    this.name = 'AdminAuthError';
  }
}

/** What a failed relay try is known by (see `relay/deliver.ts`). */
export interface RelayDeliveryErrorDetails {
  /** The HTTP status, when the route answered. */
  status?: number;
  /** The wait the route asked for with `Retry-After` (429 and 503), capped; the next try waits at least this. */
  retryAfterMs?: number;
}

/** A relay route did not take an event; the relay worker throws it so that BullMQ tries again on the route's schedule. */
export class RelayDeliveryError extends GeohookError {
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;

  constructor(message: string, details: RelayDeliveryErrorDetails = {}, options?: { cause?: unknown }) {
    super('GEOHOOK_ERR_RELAY_DELIVERY', message, options);
    this.name = 'RelayDeliveryError';
    this.status = details.status;
    this.retryAfterMs = details.retryAfterMs;
  }
}

/**
 * A broker did not take an event (docs/streams.md): `retryable` false when trying again cannot help (a message past
 * the broker's size limit), which makes it a dead letter at once.
 */
export class StreamPublishError extends GeohookError {
  readonly retryable: boolean;
  /** The broker gave no answer in time. */
  readonly timeout: boolean;

  constructor(message: string, details: { retryable?: boolean; timeout?: boolean } = {}, options?: { cause?: unknown }) {
    super('GEOHOOK_ERR_STREAM_PUBLISH', message, options);
    this.name = 'StreamPublishError';
    this.retryable = details.retryable ?? true;
    this.timeout = details.timeout ?? false;
  }
}

/** The message of anything thrown: an error's own, else the value as text. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * What a failed `listen` says to a person: a port in use is `GEOHOOK_ERR_PORT_IN_USE` naming the address and the
 * setting that moves it; any other error is returned as it is.
 */
export function listenFailure(err: unknown, what: string, address: string, setting: string): unknown {
  if ((err as NodeJS.ErrnoException | null)?.code !== 'EADDRINUSE') return err;
  return new GeohookError(
    'GEOHOOK_ERR_PORT_IN_USE',
    `${what} cannot listen on ${address}: the port is in use (by another program, or another geohook); ${setting} moves it`,
    { cause: err },
  );
}
