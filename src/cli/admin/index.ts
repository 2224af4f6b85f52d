import type { Command } from 'commander';
import { addAdminOptions } from './flags.js';
import { registerAdminPlacement } from './placement.js';
import { registerAdminRotateKey } from './rotate-key.js';
import { registerAdminServices } from './services.js';
import { registerAdminSettings } from './settings.js';
import { registerAdminToken } from './token.js';
import { registerAdminWebhooks } from './webhooks.js';

/** `geohook admin …`: the whole admin API from the shell. */
export function registerAdmin(admin: Command): void {
  addAdminOptions(admin).option('--table', 'print a readable table instead of JSON');
  registerAdminWebhooks(admin);
  registerAdminSettings(admin);
  registerAdminPlacement(admin);
  registerAdminServices(admin);
  registerAdminToken(admin);
  registerAdminRotateKey(admin);
}
