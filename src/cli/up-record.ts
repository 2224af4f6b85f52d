import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ConfigOverrides } from '../config/load-config.js';
import { isRunning } from '../embedded/redis-server.js';

/** Where a running `geohook up` records what it registered, relative to its working directory. */
const RECORD = '.geohook/up.json';

/** What `geohook up` registered, for a `geohook doctor` run beside it with no flags. */
export interface UpRecord {
  pid: number;
  /**
   * The settings doctor and `config check` read: the admin root, its credentials (the emulator's), the services, the
   * receiver's URL, and the services followed for change events with their tracked fields.
   */
  settings: Required<Pick<ConfigOverrides, 'ADMIN_URL' | 'REGISTER' | 'PUBLIC_URL'>> &
    Pick<ConfigOverrides, 'ADMIN_USERNAME' | 'ADMIN_PASSWORD' | 'CHANGES' | 'CHANGES_TRACK'>;
}

/** Records what this `geohook up` registered (owner-readable: it may hold the emulator's credentials); returns its removal. */
export function recordUp(settings: UpRecord['settings']): () => void {
  const path = join(process.cwd(), RECORD);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const next = `${path}.next`;
  rmSync(next, { force: true });
  writeFileSync(next, JSON.stringify({ pid: process.pid, settings } satisfies UpRecord), { mode: 0o600, flag: 'wx' });
  renameSync(next, path);
  return () => rmSync(path, { force: true });
}

/** What the `geohook up` running in the working directory registered; undefined when none runs there. */
export function readUpRecord(): UpRecord | undefined {
  try {
    const record = JSON.parse(readFileSync(join(process.cwd(), RECORD), 'utf8')) as UpRecord;
    return Number.isInteger(record.pid) && isRunning(record.pid) && typeof record.settings?.ADMIN_URL === 'string' ? record : undefined;
  } catch {
    return undefined;
  }
}
