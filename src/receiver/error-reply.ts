import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { DashboardRateLimitError, GeohookError, QueueUnavailableError, type ErrorCode } from '../errors.js';

const UNSUPPORTED = 'send application/json or application/x-www-form-urlencoded';

/** Fastify's own client-error codes, mapped to geohook's, with a message that says what is allowed. */
const fastifyCodes: Record<string, { code: ErrorCode; message?: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { code: 'GEOHOOK_ERR_BODY_TOO_LARGE', message: 'the body is larger than MAX_BODY_BYTES' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { code: 'GEOHOOK_ERR_UNSUPPORTED_MEDIA_TYPE', message: `unsupported content type: ${UNSUPPORTED}` },
  FST_ERR_CTP_INVALID_TYPE: { code: 'GEOHOOK_ERR_UNSUPPORTED_MEDIA_TYPE', message: `unsupported content type: ${UNSUPPORTED}` },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { code: 'GEOHOOK_ERR_BAD_PAYLOAD' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { code: 'GEOHOOK_ERR_BAD_PAYLOAD' },
};

/**
 * A body over the limit: its size when it was announced (`content-length`), the limit, and the setting that
 * raises it.
 */
export function bodyTooLarge(limitBytes: number, contentLength: string | undefined): GeohookError {
  const size = Number(contentLength);
  const body = Number.isSafeInteger(size) && size > limitBytes ? `the body (${size} bytes)` : 'the body';
  return new GeohookError(
    'GEOHOOK_ERR_BODY_TOO_LARGE',
    `${body} is larger than MAX_BODY_BYTES (${limitBytes} bytes): raise MAX_BODY_BYTES to take it`,
  );
}

/** A delivery in neither accepted content type (Fastify's parsers refuse most; an empty body reaches the route). */
export function unsupportedMediaType(): GeohookError {
  return new GeohookError('GEOHOOK_ERR_UNSUPPORTED_MEDIA_TYPE', `unsupported content type: ${UNSUPPORTED}`);
}

/** True for an error thrown while a body was parsed in its content type (bad JSON and the like). */
export function isBodyParseError(err: FastifyError): boolean {
  return err.statusCode === 400 && (err.code === undefined || err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || err.name === 'SyntaxError');
}

/** Any error as a {@link GeohookError}: ours as they are, Fastify's by code, the rest as internal. */
export function toGeohookError(err: FastifyError | GeohookError): GeohookError {
  if (err instanceof GeohookError) return err;
  const mapped = err.code === undefined ? undefined : fastifyCodes[err.code];
  if (mapped !== undefined) return new GeohookError(mapped.code, mapped.message ?? err.message);
  if (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500) {
    return new GeohookError('GEOHOOK_ERR_BAD_PAYLOAD', err.message);
  }
  return new GeohookError('GEOHOOK_ERR_INTERNAL', 'internal error', { cause: err });
}

/** Sends Fastify's error shape `{statusCode, code, error, message}`, with `Retry-After` on a 503 or a 429. */
export function sendError(reply: FastifyReply, error: GeohookError): FastifyReply {
  if (error instanceof QueueUnavailableError || error instanceof DashboardRateLimitError) {
    reply.header('retry-after', String(error.retryAfterSeconds));
  }
  return reply.code(error.statusCode).send({
    statusCode: error.statusCode,
    code: error.code,
    error: STATUS_CODES[error.statusCode] ?? 'Error',
    message: error.message,
  });
}

/** The answer to a request no route takes: 404 naming its method and path, never its query. */
export function sendNotFound(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return sendError(reply, new GeohookError('GEOHOOK_ERR_NOT_FOUND', `no route ${request.method} ${request.url.split(/[?#]/)[0]}`));
}
