import { randomBytes } from 'node:crypto';
import type { AttachmentLinkTarget } from '../arcgis/attachment-link-target.js';
import type { RedisClient } from '../redis/connection.js';
import { attachmentLinkKey } from '../redis/keys.js';
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

/** Makes the link of an attachment. */
export type AttachmentLinker = (target: AttachmentLinkTarget) => Promise<string>;

/** Options of {@link createAttachmentLinker}. */
export interface AttachmentLinkerOptions {
  /** The key, read once at first use ({@link loadAttachmentLinkKey}); a failed read is tried again at the next link. */
  key: () => Promise<Buffer>;
  /** Where links point: `<baseUrl>/attachments/<token>`. */
  baseUrl: string;
  /** How long a link opens its attachment from when it is made. */
  lifetimeSeconds: number;
  /** @defaultValue Date.now */
  now?: () => number;
}

/** Links `<baseUrl>/attachments/<signed token>`, each valid for `lifetimeSeconds` from when it is made. */
export function createAttachmentLinker(options: AttachmentLinkerOptions): AttachmentLinker {
  const now = options.now ?? Date.now;
  const base = options.baseUrl.replace(/\/+$/, '');
  let key: Promise<Buffer> | undefined;
  return async (target) => {
    key ??= options.key().catch((err: unknown) => {
      key = undefined;
      throw err;
    });
    const expiresAtSeconds = Math.floor(now() / 1000) + options.lifetimeSeconds;
    return `${base}${ATTACHMENT_LINK_PATH}${signAttachmentLink(await key, { ...target, expiresAtSeconds })}`;
  };
}
