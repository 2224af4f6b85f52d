import type { Command } from 'commander';
import { generateToken } from '../../arcgis-request/generate-token.js';
import { loadConfig } from '../../config/load-config.js';
import { GeohookError } from '../../errors.js';
import { printResult } from '../print.js';
import { adminOverrides, flagsOf, integer } from './flags.js';

/** `geohook admin token`: a token for the configured user, printed. */
export function registerAdminToken(admin: Command): void {
  admin
    .command('token')
    .description('obtain a token with --username/--password (or ADMIN_USERNAME/ADMIN_PASSWORD) and print it')
    .option('--expiration <minutes>', 'token lifetime', integer)
    .action(async (_options: unknown, command: Command) => {
      const flags = flagsOf(command);
      const config = loadConfig(process.env, adminOverrides(flags));
      const auth = config.admin?.auth;
      if (config.admin === undefined || auth === undefined || !('username' in auth)) {
        throw new GeohookError(
          'GEOHOOK_ERR_CONFIG',
          'ADMIN_USERNAME: required with ADMIN_PASSWORD and ADMIN_URL (or --username, --password, --admin-url)',
        );
      }
      const issued = await generateToken({
        tokenUrl: auth.tokenUrl ?? `${config.admin.url}/generateToken`,
        username: auth.username,
        password: auth.password,
        ...(flags.expiration === undefined ? {} : { expirationMinutes: flags.expiration as number }),
      });
      printResult(issued, flags);
    });
}
