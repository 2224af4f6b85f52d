import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The role the mirror connects as: it owns the database `geohook` and is no superuser. */
export const MIRROR_ROLE = 'geohook';

/** The user ids PostgreSQL runs as when geohook is root; `undefined` when it runs as geohook's own user. */
export type ClusterOwner = { uid: number; gid: number } | undefined;

/** pg_hba.conf: every connection, over the socket as over 127.0.0.1, signs in with its role's password (SCRAM). */
const HOST_AUTH = `# Written by geohook at each start: every connection signs in with its role's password (SCRAM).
local all all scram-sha-256
host all all 127.0.0.1/32 scram-sha-256
`;

/** A new random password (24 characters, none that a URL or a libpq password file would need to escape). */
export const newPassword = (): string => randomBytes(18).toString('base64url');

/** Writes a file only its owner reads (mode 0600), owned by `owner` when one is given. */
export function writePrivateFile(path: string, text: string, owner: ClusterOwner = undefined): void {
  writeFileSync(path, text, { mode: 0o600 });
  chmodSync(path, 0o600);
  if (owner !== undefined) chownSync(path, owner.uid, owner.gid);
}

/**
 * Writes the cluster's pg_hba.conf before each start, so that a cluster of an earlier geohook (which trusted its
 * socket) asks for passwords too.
 */
export function writeHostAuth(dataDir: string, owner: ClusterOwner): void {
  writePrivateFile(join(dataDir, 'pg_hba.conf'), HOST_AUTH, owner);
}

/** The start of the line of {@link MIRROR_ROLE} in a libpq password file: any host and port, the database `geohook`. */
const PASS_LINE = `*:*:geohook:${MIRROR_ROLE}:`;

/**
 * The password of {@link MIRROR_ROLE}, from the libpq password file `path` (what `PGPASSFILE` names for `psql`):
 * a new random one, written there (mode 0600), when the file is missing or has no line for the role.
 */
export function mirrorRolePassword(path: string): string {
  const lines = existsSync(path) ? readFileSync(path, 'utf8').split('\n') : [];
  const known = lines.find((line) => line.startsWith(PASS_LINE))?.slice(PASS_LINE.length);
  if (known !== undefined && known !== '') return known;
  const password = newPassword();
  writePrivateFile(path, `${PASS_LINE}${password}\n`);
  return password;
}
