import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AdminError } from './admin-error.js';

/** The response format a request asks for: `json` (the default) or `pjson`; anything else is undefined. */
function formatOf(request: FastifyRequest): 'json' | 'pjson' | undefined {
  const query = (request.query ?? {}) as Record<string, unknown>;
  const form = (request.body ?? {}) as Record<string, unknown>;
  const value = form.f ?? query.f ?? 'json';
  // Only a string: String() of a JSON body's `{"f":{"toString":1}}` throws.
  const format = typeof value === 'string' ? value.toLowerCase() : undefined;
  return format === 'json' || format === 'pjson' ? format : undefined;
}

/** Answers `body` with HTTP 200: compact JSON for `f=json`, pretty JSON for `f=pjson`. */
export function sendAdmin(request: FastifyRequest, reply: FastifyReply, body: unknown): FastifyReply {
  const format = formatOf(request);
  const answer = format === undefined ? new AdminError(400, "Invalid value for parameter 'f': must be json or pjson.").toJSON() : body;
  return reply
    .code(200)
    .type('application/json; charset=utf-8')
    .send(format === 'pjson' ? JSON.stringify(answer, null, 2) : JSON.stringify(answer));
}

/** An error in the REST services' shape, `{"error":{"code","message","details"}}`, answered with HTTP 200 as the product does. */
export function sendRestError(reply: FastifyReply, error: AdminError): FastifyReply {
  const [message, ...details] = error.messages;
  return reply
    .code(200)
    .type('application/json; charset=utf-8')
    .send(JSON.stringify({ error: { code: error.code, message, details } }));
}

/** Any error of a REST route as the error to answer: a client's mistake is a 400, anything else a 500 that says no more. */
export function toRestError(err: FastifyError | AdminError): AdminError {
  if (err instanceof AdminError) return err;
  if (err.statusCode !== undefined && err.statusCode < 500) return new AdminError(400, 'Unable to complete operation.', err.message);
  return new AdminError(500, 'Internal error.');
}
