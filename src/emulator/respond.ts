import type { FastifyReply, FastifyRequest } from 'fastify';
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
