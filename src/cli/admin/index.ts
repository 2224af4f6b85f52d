import { Option, type Command } from 'commander';
import { registerAdminPlacement } from './placement.js';
import { registerAdminRotateKey } from './rotate-key.js';
import { registerAdminServices } from './services.js';
import { registerAdminSettings } from './settings.js';
import { registerAdminToken } from './token.js';
import { registerAdminWebhooks } from './webhooks.js';

/** `geohook admin …`: the whole admin API from the shell. */
export function registerAdmin(admin: Command): void {
  admin
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
    )
    .option('--table', 'print a readable table instead of JSON');
  registerAdminWebhooks(admin);
  registerAdminSettings(admin);
  registerAdminPlacement(admin);
  registerAdminServices(admin);
  registerAdminToken(admin);
  registerAdminRotateKey(admin);
}
