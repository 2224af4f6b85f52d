import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ResolvedAdminAuth } from '../arcgis/admin-auth.js';
import { serviceRestUrl } from '../arcgis/rest-urls.js';
import type { TrustedUrls } from '../arcgis/trusted-urls.js';
import { createServiceSession } from '../arcgis-request/service-session.js';
import { GeohookError, QueueUnavailableError } from '../errors.js';
import { verifyAttachmentLink, type AttachmentLinkClaims } from '../signature/attachment-link.js';
import { ATTACHMENT_LINK_PATH } from '../signature/attachment-linker.js';
import { streamAttachment } from './stream-attachment.js';

/** Options of {@link attachmentRoutes}. */
export interface AttachmentRoutesOptions {
  /** The key links are signed with ({@link loadAttachmentLinkKey}), read at the first link opened. */
  key: () => Promise<Buffer>;
  /** ADMIN_URL: the services' REST resources are beside it. */
  adminUrl: string;
  /** The services whose attachments are linked (`attachments: "link"`): the only ones a link may open. */
  services: ReadonlySet<string>;
  /** Where geohook may send its token. */
  trusted: TrustedUrls;
  auth?: ResolvedAdminAuth;
  /** The longest read of one attachment, ms. @defaultValue 300000 */
  timeoutMs?: number;
  /** @defaultValue Date.now */
  now?: () => number;
  /** @defaultValue globalThis.fetch */
  fetch?: typeof fetch;
}

/** A media type as a header may carry it; anything else is sent as `application/octet-stream`. */
const MEDIA_TYPE = /^[\w.+-]{1,64}\/[\w.+-]{1,128}$/;

/** Image types a browser shows inline without running anything; any other attachment is a download. */
const INLINE_TYPES = /^image\/(png|jpeg|gif|webp|bmp|avif)$/i;

/** `Content-Disposition` with the attachment's name: an ASCII fallback and the name itself (RFC 6266). */
function disposition(claims: AttachmentLinkClaims): string {
  const kind = INLINE_TYPES.test(claims.contentType) ? 'inline' : 'attachment';
  const fallback = claims.name.replace(/[^\x20-\x7e]|["\\%]/g, '_') || 'attachment';
  return `${kind}; filename="${fallback}"; filename*=UTF-8''${encodeURIComponent(claims.name)}`;
}

/**
 * `GET /attachments/<token>` (docs/changes.md#attachment-links): a link checked whole (its MAC in constant time,
 * its expiry, its service one of those linked) before anything is asked of the GIS server; then the attachment's
 * bytes streamed from the configured service's URL with geohook's token, which never leaves geohook.
 */
export async function attachmentRoutes(app: FastifyInstance, options: AttachmentRoutesOptions): Promise<void> {
  const now = options.now ?? Date.now;
  let key: Promise<Buffer> | undefined;
  const keyOf = (): Promise<Buffer> =>
    (key ??= options.key().catch((err: unknown) => {
      key = undefined;
      throw new QueueUnavailableError('the key of attachment links could not be read from Redis; retry later', 1, { cause: err });
    }));

  // A wildcard, not a parameter: a token is longer than the parameters Fastify takes (100 characters).
  app.get<{ Params: { '*': string } }>(`${ATTACHMENT_LINK_PATH}*`, async (request, reply) => {
    const claims = verifyAttachmentLink(await keyOf(), request.params['*'], now());
    if (claims === 'expired')
      throw new GeohookError('GEOHOOK_ERR_ATTACHMENT_LINK_EXPIRED', 'the attachment link has expired: a newer event carries a new one');
    if (claims === 'invalid' || !options.services.has(claims.service))
      throw new GeohookError('GEOHOOK_ERR_ATTACHMENT_LINK_INVALID', 'the attachment link is not one geohook made, or was altered');
    const { service, layerId, objectId, attachmentId } = claims;
    const url = new URL(`${serviceRestUrl(options.adminUrl, service).href}/${layerId}/${objectId}/attachments/${attachmentId}`);
    const session = createServiceSession({
      trusted: options.trusted,
      ...(options.auth === undefined ? {} : { auth: options.auth }),
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
      timeoutMs: options.timeoutMs ?? 300_000,
      deadlineMs: options.timeoutMs ?? 300_000,
    });
    const flowing = await streamAttachment(session, url).catch((err: unknown) => {
      request.log.warn({ err, service, layerId, objectId, attachmentId }, 'attachment not read from the GIS server');
      throw new GeohookError(
        'GEOHOOK_ERR_ATTACHMENT_UNAVAILABLE',
        `the GIS server did not give attachment ${attachmentId} of feature ${objectId} (layer ${layerId} of ${service})`,
        { cause: err },
      );
    });
    flowing.done.catch((err: unknown) => request.log.warn({ err, service, attachmentId }, 'attachment cut off while it was sent'));
    return send(reply, claims, flowing.stream);
  });
}

/** The bytes with headers that keep them inert on geohook's origin: no sniffing, no script, no caching. */
function send(reply: FastifyReply, claims: AttachmentLinkClaims, stream: NodeJS.ReadableStream): FastifyReply {
  return reply
    .header('content-type', MEDIA_TYPE.test(claims.contentType) ? claims.contentType : 'application/octet-stream')
    .header('content-disposition', disposition(claims))
    .header('x-content-type-options', 'nosniff')
    .header('content-security-policy', "default-src 'none'; sandbox")
    .header('cache-control', 'private, no-store')
    .send(stream);
}
