import { InvalidArgumentError, Option, type Command } from 'commander';
import { loadConfig } from '../../config/load-config.js';
import { REGISTERED_HOOK } from '../../config/self-registration.js';
import { GeohookError } from '../../errors.js';
import { configuredTarget, connectRedis, hasConfiguredRedis } from '../../redis/connection.js';
import { rotateKey, type RotateKeyResult } from '../../registration/rotate-key.js';
import { printResult } from '../print.js';
import { clientOf, receiverOverrides, type ReceiverFlags } from './flags.js';

interface RotateFlags extends ReceiverFlags {
  register?: string;
  graceSeconds: number;
  propagationSeconds: number;
}

function seconds(value: string): number {
  if (!/^\d+(\.\d+)?$/.test(value)) throw new InvalidArgumentError('a number of seconds');
  return Number(value);
}

const configError = (message: string): GeohookError => new GeohookError('GEOHOOK_ERR_CONFIG', message);

/** Rotates the generated key with the configuration `geohook serve` would read (one schema, same defaults). */
async function rotate(flags: RotateFlags): Promise<RotateKeyResult> {
  const config = loadConfig(process.env, { ...receiverOverrides(flags), REGISTER: flags.register });
  if (config.admin === undefined) throw configError('ADMIN_URL: required (the admin root), or pass --admin-url');
  if (!hasConfiguredRedis(config)) throw configError('REDIS_URL: required (the Redis the receivers use), or pass --redis-url');
  if (config.admin.register.length === 0) throw configError('REGISTER: required (the services registered), or pass --register');
  if ((config.hooks.get(REGISTERED_HOOK)?.secrets.length ?? 0) > 0) {
    throw configError('HOOK_SECRETS: set, so the registered key is the configured one; rotate it by changing HOOK_SECRETS instead');
  }
  const client = clientOf(config.admin);
  const redis = connectRedis(configuredTarget(config), { maxRetriesPerRequest: 3 });
  try {
    return await rotateKey({
      client,
      redis,
      prefix: config.prefix,
      hook: REGISTERED_HOOK,
      hookUrl: `${config.publicUrl}/webhooks/${REGISTERED_HOOK}`,
      services: config.admin.register,
      propagationMs: flags.propagationSeconds * 1000,
      graceMs: flags.graceSeconds * 1000,
    });
  } finally {
    await redis.quit().catch(() => redis.disconnect());
  }
}

/** `geohook admin rotate-key`: a new generated signature key for the `default` hook, without a lost delivery. */
export function registerAdminRotateKey(admin: Command): void {
  admin
    .command('rotate-key')
    .description(
      "rotate the default hook's generated signature key: add the new key, switch the webhooks, drop the old key after a grace period",
    )
    .addOption(new Option('--redis-url <url>', 'the Redis the receivers use').env('REDIS_URL'))
    .addOption(new Option('--prefix <prefix>', 'their key prefix (default geohook)').env('GEOHOOK_PREFIX'))
    .addOption(new Option('--public-url <url>', 'their PUBLIC_URL (default http://127.0.0.1:$PORT)').env('PUBLIC_URL'))
    .addOption(new Option('--register <services>', 'the registered services, comma-separated').env('REGISTER'))
    .addOption(new Option('--propagation-seconds <s>', 'wait for the replicas to load the new key').argParser(seconds).default(10))
    .addOption(new Option('--grace-seconds <s>', 'keep accepting the old key this long after the switch').argParser(seconds).default(60))
    .action(async (_options: unknown, command: Command) => {
      const flags = command.optsWithGlobals<RotateFlags>();
      const result = await rotate(flags);
      printResult(flags.table === true ? result.services : result, flags, ['service', 'webhookIds', 'action']);
    });
}
