import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Command } from 'commander';
import type pg from 'pg';
import { adminAuthFor, onlineOrgIdOf } from '../arcgis/online-admin.js';
import { createServiceSession } from '../arcgis-request/service-session.js';
import { PreviousValuesStore } from '../changes/previous-values.js';
import { loadPg } from '../commonjs/pg.js';
import type { GeohookConfig } from '../config/load-config.js';
import type { MirrorConfig } from '../config/mirror-schema.js';
import { REGISTERED_HOOK } from '../config/self-registration.js';
import { serviceLocatorOf } from '../config/service-locator.js';
import { ConfigError, GeohookError } from '../errors.js';
import { databaseUnavailable } from '../mirror/database-unavailable.js';
import { createMirrorPool, prepareMirrorDatabase } from '../mirror/mirror-database.js';
import { mirrorScopesOf } from '../mirror/mirror-scopes.js';
import { readMirrorStatus } from '../mirror/mirror-status.js';
import { rebuildScope } from '../mirror/rebuild-scope.js';
import { addQueueOptions, queueCommandConfig } from './config-options.js';
import { printJson, printTable } from './print.js';
import { connectQueueRedis } from './queue-redis-target.js';
import { readRunningUp, type UpMirrorRecord } from './up-record.js';

interface MirrorFlags {
  redisUrl?: string;
  prefix?: string;
  config?: string;
  json?: boolean;
  service?: string;
}

/** How long `rebuild` waits for a sync of the service that holds its lock. */
const LOCK_WAIT_MS = 60_000;

/** The database URL of a recorded mirror, with its local PostgreSQL's password read from its password file. */
function recordedDatabaseUrl(mirror: UpMirrorRecord): string {
  const url = new URL(mirror.databaseUrl);
  if (mirror.passwordFile === undefined) return url.href;
  try {
    // host:port:database:user:password, the role's line last.
    const line = readFileSync(mirror.passwordFile, 'utf8').trim().split('\n').at(-1) ?? '';
    url.password = encodeURIComponent(line.split(':').slice(4).join(':'));
  } catch {
    // Unreadable: the sign-in is refused with the cause named.
  }
  return url.href;
}

/**
 * The configuration with the mirror's settings: the environment's (MIRROR_DATABASE_URL and ADMIN_URL), else the
 * mirror of the `geohook up` running in the working directory; or the error that says which variable is missing.
 */
function mirrorConfig(flags: MirrorFlags): { config: GeohookConfig; mirror: MirrorConfig & { databaseUrl: string }; adminUrl: string } {
  const config = queueCommandConfig(flags);
  const databaseUrl = config.mirror?.databaseUrl;
  if (config.mirror !== undefined && config.admin !== undefined && databaseUrl !== undefined) {
    return { config, mirror: { ...config.mirror, databaseUrl }, adminUrl: config.admin.url };
  }
  const up = readRunningUp()?.mirror;
  if (up === undefined) {
    throw new ConfigError(
      'MIRROR_DATABASE_URL: required by geohook mirror (with ADMIN_URL and MIRROR or CHANGES), unless a geohook up --mirror runs in this directory',
    );
  }
  // The up's own PostgreSQL's password is in its file; the user's own database's comes from MIRROR_DATABASE_URL.
  return {
    config,
    mirror: {
      services: up.services,
      schema: up.schema,
      databaseUrl: databaseUrl ?? recordedDatabaseUrl(up),
      attachmentBytes: config.mirror?.attachmentBytes ?? false,
    },
    adminUrl: up.adminUrl,
  };
}

/** A pg client of the mirror's database, connected; a database that cannot be used is one line naming the fix. */
async function connectMirrorDatabase(databaseUrl: string): Promise<pg.Client> {
  const url = new URL(databaseUrl);
  const client = new (loadPg().Client)({ connectionString: databaseUrl, connectionTimeoutMillis: 10_000 });
  try {
    await client.connect();
    return client;
  } catch (err) {
    await client.end().catch(() => undefined);
    // pg asks for no password it was not given: a server that wants one is said so.
    const noPassword = url.password === '' && /client password must be a/.test((err as Error).message);
    const said = noPassword
      ? `PostgreSQL at ${url.host} (MIRROR_DATABASE_URL) wants a password for user "${decodeURIComponent(url.username)}" and geohook up records none of yours: set MIRROR_DATABASE_URL as you did for it`
      : databaseUnavailable(err, databaseUrl);
    if (said === undefined) throw err;
    throw new GeohookError('GEOHOOK_ERR_MIRROR_DATABASE', said, { cause: err });
  }
}

/** `geohook mirror …`: the PostGIS mirror (docs/mirror.md). */
export function registerMirror(mirror: Command): void {
  addQueueOptions(mirror);
  mirror
    .command('status')
    .description('per mirrored layer: its table, rows, the generation it equals, how far behind it is, the last failure')
    .option('--json', 'print one JSON object')
    .action(async (_options: unknown, command: Command) => {
      const flags = command.optsWithGlobals<MirrorFlags>();
      const { config, mirror, adminUrl } = mirrorConfig(flags);
      const { connection } = await connectQueueRedis(config);
      const client = await connectMirrorDatabase(mirror.databaseUrl).catch((err: unknown) => {
        connection.disconnect();
        throw err;
      });
      try {
        const status = await readMirrorStatus({
          client,
          schema: mirror.schema,
          redis: connection,
          prefix: config.prefix,
          hook: REGISTERED_HOOK,
          adminUrl,
        });
        if (flags.json === true) printJson(status);
        else printTable(status.layers.map((layer) => ({ ...layer, lastError: layer.lastError ?? '' })));
      } finally {
        await client.end().catch(() => undefined);
        connection.disconnect();
      }
    });

  mirror
    .command('rebuild')
    .description("copy a mirrored service's layers into new tables, swapped in for the old ones in one transaction")
    .requiredOption('--service <name>', 'a MIRROR service, folder/name.FeatureServer')
    .action(async (_options: unknown, command: Command) => {
      const flags = command.optsWithGlobals<MirrorFlags>();
      const { config, mirror, adminUrl } = mirrorConfig(flags);
      const service = flags.service!;
      if (!mirror.services.includes(service)) throw new ConfigError(`mirror rebuild: ${service} is not a service of MIRROR`);
      const auth = adminAuthFor(adminUrl, config.admin?.auth);
      const session = createServiceSession({
        trusted: serviceLocatorOf(config).trusted(REGISTERED_HOOK),
        ...(auth === undefined ? {} : { auth }),
        deadlineMs: 3_600_000,
      });
      const { connection } = await connectQueueRedis(config);
      const pool = createMirrorPool(mirror.databaseUrl, () => undefined);
      try {
        await prepareMirrorDatabase(pool, mirror.schema);
        const orgId = onlineOrgIdOf(adminUrl);
        const context = {
          pool,
          schema: mirror.schema,
          hook: REGISTERED_HOOK,
          prefix: config.prefix,
          session,
          previous: new PreviousValuesStore(connection),
          ...(orgId === undefined ? {} : { orgId }),
        };
        const layers = [];
        for (const scope of await mirrorScopesOf(session, adminUrl, REGISTERED_HOOK, service)) {
          const deadline = Date.now() + LOCK_WAIT_MS;
          let rebuilt = await rebuildScope(context, scope, scope.layerIds);
          while (rebuilt === undefined && Date.now() < deadline) {
            await sleep(500);
            rebuilt = await rebuildScope(context, scope, scope.layerIds);
          }
          if (rebuilt === undefined)
            throw new GeohookError('GEOHOOK_ERR_MIRROR_DATABASE', `mirror rebuild: ${scope.scope} stayed locked by a sync`);
          layers.push(...rebuilt.map((layer) => ({ service, ...layer, table: `${mirror.schema}.${layer.table}` })));
        }
        printJson({ layers });
      } finally {
        await pool.end();
        connection.disconnect();
      }
    });
}
