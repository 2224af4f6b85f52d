import { readFile } from 'node:fs/promises';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { createAdminClient, type AdminClient } from '../../admin/admin-client.js';
import { loadConfig, type AdminConfig, type ConfigOverrides } from '../../config/load-config.js';
import { GeohookError } from '../../errors.js';

/** Options every `geohook admin` command takes; each also has its variable (docs/configuration.md). */
export interface AdminFlags {
  adminUrl?: string;
  token?: string;
  username?: string;
  password?: string;
  tokenUrl?: string;
  table?: boolean;
}

/** The flags of an admin subcommand and of `geohook admin` itself, by name. */
export type Flags = AdminFlags & Record<string, unknown>;

/** The flags a subcommand was given, with those of `geohook admin`. */
export const flagsOf = (command: Command): Flags => command.optsWithGlobals<Flags>();

/** A whole number flag. */
export function integer(value: string): number {
  if (!/^-?\d+$/.test(value)) throw new InvalidArgumentError('a whole number');
  return Number(value);
}

/** The JSON of a file given to `--file`, `--nodes`…; a bad file is one clear line. */
export async function readJsonFile(path: string, flag: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new GeohookError('GEOHOOK_ERR_CONFIG', `${flag}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new GeohookError('GEOHOOK_ERR_CONFIG', `${flag}: ${path} is not valid JSON`);
  }
}

/** Adds the flags of the admin API's address and credentials to a command (`geohook admin`, `geohook doctor`). */
export function addAdminOptions(command: Command): Command {
  return command
    .addOption(
      new Option('--admin-url <url>', 'the admin root, {base_url} (ArcGIS Online: https://<host>/<orgId>/ArcGIS/rest/admin)').env(
        'ADMIN_URL',
      ),
    )
    .addOption(new Option('--token <token>', 'a static admin token').env('ADMIN_TOKEN'))
    .addOption(new Option('--username <name>', 'admin user, exchanged for a token').env('ADMIN_USERNAME'))
    .addOption(new Option('--password <password>', 'its password').env('ADMIN_PASSWORD'))
    .addOption(
      new Option(
        '--token-url <url>',
        'where tokens come from (default {admin-url}/generateToken; for ArcGIS Online, <origin>/sharing/rest/generateToken)',
      ).env('TOKEN_URL'),
    );
}

/** The admin variables the flags override (flags win over the environment). */
export function adminOverrides(flags: AdminFlags): ConfigOverrides {
  return {
    ADMIN_URL: flags.adminUrl,
    ADMIN_TOKEN: flags.token,
    ADMIN_USERNAME: flags.username,
    ADMIN_PASSWORD: flags.password,
    TOKEN_URL: flags.tokenUrl,
  };
}

/** The flags of a command that acts on the receivers' Redis and public URL besides the admin API. */
export interface ReceiverFlags extends AdminFlags {
  redisUrl?: string;
  prefix?: string;
  publicUrl?: string;
}

/** The admin, Redis and public-URL variables the flags override (flags win over the environment). */
export function receiverOverrides(flags: ReceiverFlags): ConfigOverrides {
  return { ...adminOverrides(flags), REDIS_URL: flags.redisUrl, GEOHOOK_PREFIX: flags.prefix, PUBLIC_URL: flags.publicUrl };
}

/**
 * Reads from the command line are tried twice, 250 ms apart (the service's client waits 4.2 s through three
 * retries): a command run by hand says at once that the admin API does not answer.
 */
const CLI_RETRY = { delaysMs: [250] } as const;

/** The command line's client of a validated admin configuration. */
export function clientOf(admin: AdminConfig): AdminClient {
  return createAdminClient({ baseUrl: admin.url, retry: CLI_RETRY, ...(admin.auth === undefined ? {} : { auth: admin.auth }) });
}

/** The admin client the flags and environment describe (validated by the one config schema). */
export async function adminClientFrom(flags: AdminFlags): Promise<AdminClient> {
  const config = loadConfig(process.env, adminOverrides(flags));
  if (config.admin === undefined) {
    throw new GeohookError(
      'GEOHOOK_ERR_CONFIG',
      'ADMIN_URL: required (the admin root, e.g. http://127.0.0.1:7080/arcgis/admin), or pass --admin-url',
    );
  }
  return clientOf(config.admin);
}
