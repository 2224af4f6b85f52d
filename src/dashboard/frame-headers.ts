import type { FastifyReply, FastifyRequest } from 'fastify';

const NO_FRAMING = "frame-ancestors 'none'";

/**
 * The dashboard's `onSend` hook: no answer under `/ui` may be shown in a frame, so that a page of another
 * origin (a sibling subdomain is same-site, and its requests carry the session cookie) cannot lay the board
 * under its own clicks. `X-Frame-Options: DENY` for older browsers, `frame-ancestors 'none'` added to the
 * Content-Security-Policy a page sets (or the whole policy when it sets none), and `nosniff`.
 */
export async function denyFraming(_request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  reply.header('x-frame-options', 'DENY').header('x-content-type-options', 'nosniff');
  const policy = reply.getHeader('content-security-policy');
  if (policy === undefined) reply.header('content-security-policy', NO_FRAMING);
  else if (!/frame-ancestors/i.test(String(policy))) reply.header('content-security-policy', `${String(policy)}; ${NO_FRAMING}`);
  return payload;
}
