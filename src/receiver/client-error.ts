import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { errorCodes, type ErrorCode } from '../errors.js';

/** Node's client errors that are worth an answer, by `err.code`; anything else is a malformed request. */
const answers: Record<string, { code: ErrorCode; message: string }> = {
  ERR_HTTP_REQUEST_TIMEOUT: {
    code: 'GEOHOOK_ERR_REQUEST_TIMEOUT',
    message: 'the request was not received in time (timeouts.headersMs, timeouts.requestMs)',
  },
  HPE_HEADER_OVERFLOW: { code: 'GEOHOOK_ERR_HEADERS_TOO_LARGE', message: 'the request headers are too large' },
};
const malformed = { code: 'GEOHOOK_ERR_BAD_REQUEST', message: 'malformed HTTP request' } as const;

/**
 * Fastify's `clientErrorHandler`: answers what Node refused before any route ran (a slow client, headers
 * too large, bytes that are not HTTP) in the geohook error shape, then closes the connection. Nothing
 * was acknowledged; a connection already reset gets nothing.
 */
export function clientErrorHandler(this: FastifyInstance, err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const { code, message } = (err.code === undefined ? undefined : answers[err.code]) ?? malformed;
  const { statusCode } = errorCodes[code];
  this.log.debug({ err, code }, 'client error');
  if (socket.writable) {
    const body = JSON.stringify({ statusCode, code, error: STATUS_CODES[statusCode], message });
    socket.write(
      `HTTP/1.1 ${statusCode} ${STATUS_CODES[statusCode]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
