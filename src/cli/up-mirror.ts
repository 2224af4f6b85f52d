import { resolve } from 'node:path';
import type { AdminConfig } from '../config/load-config.js';
import type { MirrorConfig } from '../config/mirror-schema.js';
import { startPostgresServer, type PostgresServer } from '../embedded/postgres-server.js';
import { printNotice } from './print.js';
import type { UpMirrorRecord } from './up-record.js';

/** Where `geohook up` keeps its local PostgreSQL. */
export const EMBEDDED_POSTGRES_DIR = '.geohook/pg';

/** The mirror `geohook up` runs, and its local PostgreSQL when it started one. */
export interface UpMirror {
  mirror: MirrorConfig | undefined;
  postgres: PostgresServer | undefined;
}

/**
 * The mirror of `geohook up` (docs/mirror.md): MIRROR's services (else the CHANGES services: with its own emulator,
 * its Parcels), into MIRROR_DATABASE_URL (a PostgreSQL of the user's, with its own emulator too), else into a local PostgreSQL with PostGIS started with its data
 * under `./.geohook/pg` (as the `postgres` user when root). None without MIRROR or `--mirror`: plain `geohook up`
 * needs no PostgreSQL.
 */
export async function startUpMirror(configured: MirrorConfig | undefined, admin: AdminConfig, wanted: boolean): Promise<UpMirror> {
  if (configured === undefined && !wanted) return { mirror: undefined, postgres: undefined };
  // With its own emulator and MIRROR unset, the emulator's CHANGES services (its Parcels).
  const services = configured === undefined || configured.services.length === 0 ? admin.changes.services : configured.services;
  const schema = configured?.schema ?? 'geohook';
  if (configured?.databaseUrl !== undefined) return { mirror: { ...configured, services }, postgres: undefined };
  const postgres = await startPostgresServer({ dir: resolve(EMBEDDED_POSTGRES_DIR) });
  return { mirror: { services, databaseUrl: postgres.url, schema, attachmentBytes: configured?.attachmentBytes ?? false }, postgres };
}

/** `text` quoted for a POSIX shell. */
const shellQuote = (text: string): string => `'${text.replaceAll("'", "'\\''")}'`;

/**
 * The notice that says what the mirror writes where, with the `psql` command that lists its tables and generations:
 * without a password (a local PostgreSQL's comes from its password file, `PGPASSFILE`).
 */
export function printMirrorNotice(mirror: MirrorConfig, postgres: PostgresServer | undefined): void {
  printNotice(`mirror     ${mirror.services.join(', ')} into PostgreSQL, schema ${mirror.schema}`);
  if (mirror.databaseUrl === undefined) return;
  const url = new URL(mirror.databaseUrl);
  url.password = '';
  const passwordFile = postgres === undefined ? '' : `PGPASSFILE=${shellQuote(postgres.passwordFile)} `;
  printNotice(`look:           ${passwordFile}psql ${shellQuote(url.href)} -c 'SELECT * FROM ${mirror.schema}.mirror_state'`);
}

/** What `geohook mirror status` run beside this `geohook up` needs to read its mirror: no password. */
export function upMirrorRecord(adminUrl: string, mirror: MirrorConfig, postgres: PostgresServer | undefined): UpMirrorRecord {
  const url = new URL(mirror.databaseUrl ?? '');
  url.password = '';
  return {
    adminUrl,
    services: [...mirror.services],
    schema: mirror.schema,
    databaseUrl: url.href,
    ...(postgres === undefined ? {} : { passwordFile: postgres.passwordFile }),
  };
}
