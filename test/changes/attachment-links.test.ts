import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import t from 'tap';
import type { ChangeEvent } from '../../src/changes/change-event.js';
import { loadConfig } from '../../src/config/load-config.js';
import { attachmentLinkKey } from '../../src/redis/keys.js';
import { signAttachmentLink, verifyAttachmentLink, type AttachmentLinkClaims } from '../../src/signature/attachment-link.js';
import { createAttachmentLinker, redisLinkExpiries } from '../../src/signature/attachment-linker.js';
import { PARCELS } from '../helpers/edits.js';
import { countChanges, setUpParcelsChanges } from '../helpers/parcels-changes.js';
import { configFile, uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';

// Attachment links (issue 55): with `attachments: "link"` each attachment of a change event carries a signed,
// short-lived geohook URL that streams its bytes from the configured server with geohook's token.

const KEY = Buffer.alloc(32, 7);
const CLAIMS: AttachmentLinkClaims = {
  service: 'Hosted/Parcels.FeatureServer',
  layerId: 0,
  objectId: 12,
  attachmentId: 3,
  contentType: 'image/jpeg',
  name: 'photo-1.jpg',
  expiresAtSeconds: 1_900_000_000,
};

// The MAC computed apart: python3 hmac.new(bytes([7])*32, b'geohook-attachment-link:' + payload, sha256).
t.test('a link token is its claims and their HMAC-SHA256 under the key (known answer)', async (t) => {
  const token = signAttachmentLink(KEY, CLAIMS);
  t.equal(
    token,
    'eyJzIjoiSG9zdGVkL1BhcmNlbHMuRmVhdHVyZVNlcnZlciIsImwiOjAsIm8iOjEyLCJhIjozLCJ0IjoiaW1hZ2UvanBlZyIsIm4iOiJwaG90by0xLmpwZyIsImUiOjE5MDAwMDAwMDB9.' +
      'tVtObFF5DrGVHQaH8k6vxripaRG2GfVQa3zuJp4Jx8I',
  );
});

t.test('a token verifies under its key until it expires; altered, or under another key, it does not', async (t) => {
  const token = signAttachmentLink(KEY, CLAIMS);
  t.same(verifyAttachmentLink(KEY, token, 1_899_999_999_000), CLAIMS);
  t.equal(verifyAttachmentLink(KEY, token, 1_900_000_000_000), 'expired', 'expired at its second');
  t.equal(verifyAttachmentLink(Buffer.alloc(32, 8), token, 0), 'invalid', 'another key');
  const [payload, mac] = token.split('.') as [string, string];
  const other = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), a: 4 })).toString('base64url');
  t.equal(verifyAttachmentLink(KEY, `${other}.${mac}`, 0), 'invalid', 'another attachment under the same MAC');
  t.equal(verifyAttachmentLink(KEY, `${payload}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`, 0), 'invalid', 'an altered MAC');
  t.equal(verifyAttachmentLink(KEY, `${payload}.${mac}x`, 0), 'invalid', 'a MAC of another length');
  t.equal(verifyAttachmentLink(KEY, 'not a token', 0), 'invalid');
});

t.test('attachmentLinks: its base URL and lifetime are checked at start-up', async (t) => {
  const env = (attachmentLinks: unknown) => ({
    GEOHOOK_CONFIG: configFile(t, { changes: { [PARCELS]: { attachments: 'link' } }, attachmentLinks }),
    ADMIN_URL: 'https://gis.example.com/arcgis/admin',
    PUBLIC_URL: 'https://hooks.example.com/',
  });
  t.same(loadConfig(env({})).attachmentLinks, { baseUrl: 'https://hooks.example.com', lifetimeSeconds: 3600 }, 'PUBLIC_URL, an hour');
  t.same(loadConfig(env({ baseUrl: 'https://files.example.com/geohook/', lifetimeSeconds: 600 })).attachmentLinks, {
    baseUrl: 'https://files.example.com/geohook',
    lifetimeSeconds: 600,
  });
  for (const [bad, message] of [
    [{ baseUrl: 'ftp://files.example.com' }, /attachmentLinks\.baseUrl.*without credentials, query or fragment/],
    [{ baseUrl: 'https://user:pass@files.example.com' }, /attachmentLinks\.baseUrl/],
    [{ baseUrl: 'https://files.example.com/?a=1' }, /attachmentLinks\.baseUrl/],
    [{ lifetimeSeconds: 30 }, /attachmentLinks\.lifetimeSeconds.*60 to 604800/],
    [{ lifetime: 30 }, /attachmentLinks/],
  ] as const)
    t.throws(() => loadConfig(env(bad)), { code: 'GEOHOOK_ERR_CONFIG', message }, JSON.stringify(bad));
});

const redis = await startRedis(t);

t.test('attachments "link": every photo of a submission streams through its link with the SHA-256 of its event', async (t) => {
  const config = configFile(t, { changes: { [PARCELS]: { attachments: 'link' } } });
  const { emulator, geohook, events, prefix } = await setUpParcelsChanges(t, redis, { GEOHOOK_CONFIG: config });
  await emulator.control('services/Hosted/Parcels.FeatureServer/submissions', { photos: 2, photoBytes: 300_000 });
  const all = await countChanges(events, 3);
  const entries = all.flatMap((event: ChangeEvent) => event.attachments?.adds ?? []);
  t.equal(entries.length, 2);
  for (const entry of entries) {
    t.match(entry.url, new RegExp(`^${geohook.url}/attachments/[\\w-]+\\.[\\w-]{43}$`), 'a geohook URL');
    t.notMatch(entry.url, /token=/i, 'no token of the GIS server in it');
    const response = await fetch(entry.url!);
    t.equal(response.status, 200);
    t.equal(response.headers.get('content-type'), 'image/jpeg');
    t.equal(response.headers.get('x-content-type-options'), 'nosniff');
    const bytes = Buffer.from(await response.arrayBuffer());
    t.equal(bytes.length, 300_000);
    t.equal(createHash('sha256').update(bytes).digest('hex'), entry.sha256, 'the bytes the event hashed');
  }

  const url = entries[0]!.url!;
  // Attachment downloads only: geohook's own passes (watermarks, webhooks) may reach the emulator meanwhile.
  const downloads = (): number => emulator.requests.filter((line) => /\/attachments\/\d+/.test(line)).length;
  const asked = downloads();
  const [payload, mac] = url.slice(url.lastIndexOf('/') + 1).split('.') as [string, string];
  const altered = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), a: entries[1]!.id })).toString(
    'base64url',
  );
  const tampered = await fetch(`${geohook.url}/attachments/${altered}.${mac}`);
  t.equal(tampered.status, 403);
  t.equal(((await tampered.json()) as { code: string }).code, 'GEOHOOK_ERR_ATTACHMENT_LINK_INVALID');

  const connection = new Redis(redis.url);
  t.teardown(() => connection.disconnect());
  t.equal((await connection.keys(`${prefix}:attachments:link-expiry:*`)).length, 2, 'the expiry of each photo kept for its links');
  const key = Buffer.from((await connection.get(attachmentLinkKey(prefix)))!, 'base64url');
  const claims = verifyAttachmentLink(key, `${payload}.${mac}`, Date.now()) as AttachmentLinkClaims;
  const expired = await fetch(`${geohook.url}/attachments/${signAttachmentLink(key, { ...claims, expiresAtSeconds: 1_000_000 })}`);
  t.equal(expired.status, 410);
  t.equal(((await expired.json()) as { code: string }).code, 'GEOHOOK_ERR_ATTACHMENT_LINK_EXPIRED');
  const elsewhere = await fetch(
    `${geohook.url}/attachments/${signAttachmentLink(key, { ...claims, service: 'Hosted/Other.FeatureServer' })}`,
  );
  t.equal(elsewhere.status, 403, 'a service whose attachments are not linked');
  t.equal(downloads(), asked, 'no download reached the GIS server for a refused link');

  const gone = await fetch(`${geohook.url}/attachments/${signAttachmentLink(key, { ...claims, attachmentId: 999_999 })}`);
  t.equal(gone.status, 502);
  t.equal(((await gone.json()) as { code: string }).code, 'GEOHOOK_ERR_ATTACHMENT_UNAVAILABLE');
});

t.test('a version of an attachment linked again (its range resolved twice) gets the same link: the expiry is its first', async (t) => {
  const connection = new Redis(redis.url);
  t.teardown(() => connection.disconnect());
  let nowMs = 1_800_000_000_000;
  const linker = createAttachmentLinker({
    key: async () => KEY,
    baseUrl: 'https://geohook.example.com/',
    lifetimeSeconds: 3600,
    expiries: redisLinkExpiries(connection, uniquePrefix(), () => nowMs),
    now: () => nowMs,
  });
  const { expiresAtSeconds: _expiry, ...target } = CLAIMS;
  const expiryOf = (url: string) =>
    (verifyAttachmentLink(KEY, url.slice(url.lastIndexOf('/') + 1), nowMs) as AttachmentLinkClaims).expiresAtSeconds;
  const first = await linker(target, 'a'.repeat(64));
  nowMs += 90_000;
  t.equal(await linker(target, 'a'.repeat(64)), first, 'the same link 90 s later');
  t.equal(expiryOf(first), 1_800_003_600);
  t.equal(expiryOf(await linker(target, 'b'.repeat(64))), 1_800_003_690, 'new bytes: a new version, its own expiry');
  t.equal(expiryOf(await linker({ ...target, attachmentId: 4 }, 'a'.repeat(64))), 1_800_003_690, 'another attachment: its own expiry');
  t.equal(expiryOf(await linker(target)), 1_800_003_690, 'no version: from when it is made');
});
