import type { Command } from 'commander';
import pg from 'pg';
import { loadConfig } from '../config/load-config.js';
import { REGISTERED_HOOK } from '../config/self-registration.js';
import { ConfigError } from '../errors.js';
import { readMirrorStatus } from '../mirror/mirror-status.js';
import { addQueueOptions, configOverrides } from './config-options.js';
import { printJson, printTable } from './print.js';
import { connectQueueRedis } from './queue-redis-target.js';

interface MirrorFlags {
  redisUrl?: string;
  prefix?: string;
  config?: string;
  json?: boolean;
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
      const config = loadConfig(process.env, configOverrides({ redisUrl: flags.redisUrl, prefix: flags.prefix, config: flags.config }));
      if (config.mirror === undefined || config.admin === undefined) {
        throw new ConfigError('MIRROR_DATABASE_URL: required by geohook mirror (with ADMIN_URL and MIRROR or CHANGES)');
      }
      const { connection } = await connectQueueRedis(config);
      const client = new pg.Client({ connectionString: config.mirror.databaseUrl, connectionTimeoutMillis: 10_000 });
      try {
        await client.connect();
        const status = await readMirrorStatus({
          client,
          schema: config.mirror.schema,
          redis: connection,
          prefix: config.prefix,
          hook: REGISTERED_HOOK,
          adminUrl: config.admin.url,
        });
        if (flags.json === true) printJson(status);
        else printTable(status.layers.map((layer) => ({ ...layer, lastError: layer.lastError ?? '' })));
      } finally {
        await client.end().catch(() => undefined);
        connection.disconnect();
      }
    });
}
