import { createHash, randomBytes } from 'node:crypto';
import type { AttachmentLinkTarget } from '../arcgis/attachment-link-target.js';
import type { RedisClient } from '../redis/connection.js';
import { attachmentLinkExpiryKey, attachmentLinkKey } from '../redis/keys.js';
import { signAttachmentLink } from './attachment-link.js';

/** Bytes of the random key attachment links are signed with. */
const LINK_KEY_BYTES = 32;

/** The path attachment links are served under. */
export const ATTACHMENT_LINK_PATH = '/attachments/';

/**
 * The key attachment links are signed and checked with: the one in Redis (`<prefix>:attachments:link-key`), or a new
 * random one stored there first (`SET NX`), so that every replica and restart signs and checks with the same key.
 * Deleting it ends every link given out.
 */
export async function loadAttachmentLinkKey(redis: RedisClient, prefix: string): Promise<Buffer> {
  const key = attachmentLinkKey(prefix);
  await redis.set(key, randomBytes(LINK_KEY_BYTES).toString('base64url'), 'NX');
  const stored = await redis.get(key);
  if (stored === null) throw new Error(`${key} vanished from Redis as it was read`);
  return Buffer.from(stored, 'base64url');
}

/**
 * Makes the link of an attachment; `version` (the SHA-256 of its bytes) names what it links to, so that the same
 * version is given the same link however many times its event is resolved.
 */
export type AttachmentLinker = (target: AttachmentLinkTarget, version?: string) => Promise<string>;

/** When the links of a version of an attachment expire: the first expiry proposed for it, kept until then. */
export type LinkExpiries = (version: string, proposedSeconds: number) => Promise<number>;

/**
 * {@link LinkExpiries} in Redis (`<prefix>:attachments:link-expiry:<version>`): the first proposal is stored
 * (`SET NX`, expiring with it) and every later one answered with it, on every receiver of the prefix.
 */
export function redisLinkExpiries(redis: RedisClient, prefix: string, nowMs: () => number = Date.now): LinkExpiries {
  return async (version, proposedSeconds) => {
    const key = attachmentLinkExpiryKey(prefix, version);
    const ttlMs = Math.max(1, proposedSeconds * 1000 - nowMs());
    const [, [, stored] = []] = (await redis.multi().set(key, String(proposedSeconds), 'PX', ttlMs, 'NX').get(key).exec()) ?? [];
    const seconds = Number(stored);
    return Number.isSafeInteger(seconds) && seconds > 0 ? seconds : proposedSeconds;
  };
}

/** Options of {@link createAttachmentLinker}. */
export interface AttachmentLinkerOptions {
  /** The key, read once at first use ({@link loadAttachmentLinkKey}); a failed read is tried again at the next link. */
  key: () => Promise<Buffer>;
  /** Where links point: `<baseUrl>/attachments/<token>`. */
  baseUrl: string;
  /** How long a link opens its attachment from when it is made. */
  lifetimeSeconds: number;
  /**
   * Where the expiry first given to a version of an attachment is kept ({@link redisLinkExpiries}): a version linked
   * again before then gets the same link. Without it each link expires `lifetimeSeconds` after it is made.
   */
  expiries?: LinkExpiries;
  /** @defaultValue Date.now */
  now?: () => number;
}

/** The version id of an attachment's link: SHA-256 hex of its service, layer, id and `version`. */
const versionOf = (target: AttachmentLinkTarget, version: string): string =>
  createHash('sha256')
    .update([target.service, String(target.layerId), String(target.attachmentId), version].join('\n'))
    .digest('hex');

/**
 * Links `<baseUrl>/attachments/<signed token>`, each valid for `lifetimeSeconds` from when the first link of its
 * version was made (from when it is made, without `expiries` or a version).
 */
export function createAttachmentLinker(options: AttachmentLinkerOptions): AttachmentLinker {
  const now = options.now ?? Date.now;
  const base = options.baseUrl.replace(/\/+$/, '');
  let key: Promise<Buffer> | undefined;
  return async (target, version) => {
    key ??= options.key().catch((err: unknown) => {
      key = undefined;
      throw err;
    });
    const proposed = Math.floor(now() / 1000) + options.lifetimeSeconds;
    const expiresAtSeconds =
      options.expiries === undefined || version === undefined ? proposed : await options.expiries(versionOf(target, version), proposed);
    return `${base}${ATTACHMENT_LINK_PATH}${signAttachmentLink(await key, { ...target, expiresAtSeconds })}`;
  };
}
