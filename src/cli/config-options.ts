import { Option, type Command } from 'commander';
import { loadConfig, type ConfigOverrides, type GeohookConfig } from '../config/load-config.js';
import { readRunningUp } from './up-record.js';

/** Flags shared by the commands that run the receiver; each mirrors a variable of docs/configuration.md. */
const flags = [
  { flag: '--port <port>', env: 'PORT', description: 'receiver port (default 8080)' },
  { flag: '--host <host>', env: 'HOST', description: 'receiver listen address (default 0.0.0.0)' },
  { flag: '--redis-url <url>', env: 'REDIS_URL', description: 'Redis URL (default: an embedded redis-server, data under ./.geohook/)' },
  { flag: '--prefix <prefix>', env: 'GEOHOOK_PREFIX', description: 'BullMQ key prefix (default geohook)' },
  { flag: '--public-url <url>', env: 'PUBLIC_URL', description: 'base URL the GIS server reaches the receiver at' },
  { flag: '--config <file>', env: 'GEOHOOK_CONFIG', description: 'JSON file with hooks and further settings' },
  { flag: '--log-level <level>', env: 'LOG_LEVEL', description: 'pino level (default info)' },
] as const;

type ConfigFlag = (typeof flags)[number];

function toOption({ flag, env, description }: Pick<ConfigFlag, 'flag' | 'env'> & { description: string }): Option {
  return new Option(flag, description).env(env);
}

/** The flag of one variable. */
export function configOption(env: ConfigFlag['env']): Option {
  return toOption(flags.find((entry) => entry.env === env)!);
}

/** Adds the receiver flags to a command; `defaultHost` is what its `--host` help names as the default. */
export function addConfigOptions(command: Command, defaultHost = '0.0.0.0'): Command {
  for (const entry of flags) {
    command.addOption(
      toOption(entry.env === 'HOST' ? { ...entry, description: `receiver listen address (default ${defaultHost})` } : entry),
    );
  }
  return command;
}

/**
 * Adds the flags of the commands that read the queues (`consume`, `events`): Redis, whose default is the
 * embedded Redis of a `geohook up` running in the working directory, the prefix and the config file.
 */
export function addQueueOptions(command: Command): Command {
  return command
    .addOption(
      new Option('--redis-url <url>', 'Redis URL (default: the Redis of a `geohook up` running in this directory)').env('REDIS_URL'),
    )
    .addOption(configOption('GEOHOOK_PREFIX'))
    .addOption(configOption('GEOHOOK_CONFIG'));
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

/** The flags of `addQueueOptions`. */
interface QueueFlags {
  redisUrl?: string | undefined;
  prefix?: string | undefined;
  config?: string | undefined;
}

/**
 * The configuration of a command that reads the queues: the environment, its `addQueueOptions` flags winning;
 * with neither naming them, the configuration file and the prefix of the `geohook up` running in the working
 * directory (its `--config`).
 */
export function queueCommandConfig(flags: QueueFlags): GeohookConfig {
  const up = readRunningUp();
  return loadConfig(
    process.env,
    configOverrides({ redisUrl: flags.redisUrl, prefix: flags.prefix ?? up?.prefix, config: flags.config ?? up?.config }),
  );
}

/** The configuration file {@link queueCommandConfig} reads: `--config` (or GEOHOOK_CONFIG), else the running `up`'s. */
export function queueConfigFile(flags: QueueFlags): string | undefined {
  return flags.config ?? readRunningUp()?.config;
}
