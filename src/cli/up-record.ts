import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ConfigOverrides } from '../config/load-config.js';
import { isRunning } from '../embedded/redis-server.js';

/** Where a running `geohook up` records what it runs, relative to its working directory. */
const RECORD = '.geohook/up.json';

/** The mirror a running `geohook up` writes, for `geohook mirror status` beside it: never a password. */
export interface UpMirrorRecord {
  adminUrl: string;
  services: string[];
  schema: string;
  /** The database's URL without its password. */
  databaseUrl: string;
  /** Its local PostgreSQL's libpq password file (mode 0600), which holds the role's password; none for the user's own. */
  passwordFile?: string;
}

/** What a running `geohook up` runs, for the commands run beside it with no flags. */
export interface UpRecord {
  pid: number;
  /**
   * With its own emulator only, the settings doctor and `config check` read: the admin root, its credentials (the
   * emulator's), the services, the receiver's URL, and the services followed for change events with their tracked
   * fields (never credentials of a real server: with ADMIN_URL set, doctor reads the same environment).
   */
  settings?: Required<Pick<ConfigOverrides, 'ADMIN_URL' | 'REGISTER' | 'PUBLIC_URL'>> &
    Pick<ConfigOverrides, 'ADMIN_USERNAME' | 'ADMIN_PASSWORD' | 'CHANGES' | 'CHANGES_TRACK'>;
  /** Its configuration file (`--config`, GEOHOOK_CONFIG), an absolute path. */
  config?: string;
  /** Its key prefix (`--prefix`, GEOHOOK_PREFIX). */
  prefix?: string;
  mirror?: UpMirrorRecord;
}

/** Records what this `geohook up` runs (owner-readable: it may hold the emulator's credentials); returns its removal. */
export function recordUp(record: Omit<UpRecord, 'pid'>): () => void {
  const path = join(process.cwd(), RECORD);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const next = `${path}.next`;
  rmSync(next, { force: true });
  writeFileSync(next, JSON.stringify({ pid: process.pid, ...record } satisfies UpRecord), { mode: 0o600, flag: 'wx' });
  renameSync(next, path);
  return () => rmSync(path, { force: true });
}

/** The record of the `geohook up` running in the working directory; undefined when none runs there. */
export function readRunningUp(): UpRecord | undefined {
  try {
    const record = JSON.parse(readFileSync(join(process.cwd(), RECORD), 'utf8')) as UpRecord;
    return Number.isInteger(record.pid) && isRunning(record.pid) ? record : undefined;
  } catch {
    return undefined;
  }
}

/** What the `geohook up` running in the working directory registered on its emulator; undefined when none runs there. */
export function readUpRecord(): (UpRecord & { settings: NonNullable<UpRecord['settings']> }) | undefined {
  const record = readRunningUp();
  return typeof record?.settings?.ADMIN_URL === 'string'
    ? (record as UpRecord & { settings: NonNullable<UpRecord['settings']> })
    : undefined;
}
