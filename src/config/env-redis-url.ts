import { ConfigError } from '../errors.js';
import { envSchema } from './schema.js';

/** REDIS_URL, checked as the configuration checks it; undefined when it is not set (or blank). */
export function envRedisUrl(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const value = env.REDIS_URL?.trim();
  if (value === undefined || value === '') return undefined;
  const parsed = envSchema.shape.REDIS_URL.safeParse(value);
  if (!parsed.success) throw new ConfigError(`REDIS_URL: ${parsed.error.issues[0]!.message}`);
  return value;
}
