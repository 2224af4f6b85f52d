import { Option, type Command } from 'commander';
import type { ConfigOverrides } from '../config/load-config.js';

/** Flags shared by the commands that run the receiver; each mirrors a CONTRACT §2 variable. */
const flags = [
  { flag: '--port <port>', env: 'PORT', description: 'receiver port (default 8080)' },
  { flag: '--host <host>', env: 'HOST', description: 'receiver listen address (default 0.0.0.0)' },
  { flag: '--redis-url <url>', env: 'REDIS_URL', description: 'Redis URL (default: an embedded redis-server, data under ./.geohook/)' },
  { flag: '--prefix <prefix>', env: 'GEOHOOK_PREFIX', description: 'BullMQ key prefix (default geohook)' },
  { flag: '--public-url <url>', env: 'PUBLIC_URL', description: 'base URL the GIS server reaches the receiver at' },
  { flag: '--config <file>', env: 'GEOHOOK_CONFIG', description: 'JSON file with hooks and further settings' },
  { flag: '--log-level <level>', env: 'LOG_LEVEL', description: 'pino level (default info)' },
] as const;

/** Adds the receiver flags to a command. */
export function addConfigOptions(command: Command): Command {
  for (const { flag, env, description } of flags) command.addOption(new Option(flag, description).env(env));
  return command;
}

/** Turns parsed flags into overrides for `loadConfig` (flags win over the environment). */
export function configOverrides(options: Record<string, string | undefined>): ConfigOverrides {
  return {
    PORT: options.port,
    HOST: options.host,
    REDIS_URL: options.redisUrl,
    GEOHOOK_PREFIX: options.prefix,
    PUBLIC_URL: options.publicUrl,
    GEOHOOK_CONFIG: options.config,
    LOG_LEVEL: options.logLevel,
  };
}
