import { Option, type Command } from 'commander';
import type { WebhookSettings } from '../../arcgis/webhook-settings.js';
import { printResult } from '../print.js';
import { adminClientFrom, flagsOf, integer, readJsonFile } from './flags.js';

const settingFlags: [flag: string, field: keyof WebhookSettings][] = [
  ['--notification-attempts <n>', 'notificationAttempts'],
  ['--notification-timeout <seconds>', 'notificationTimeOutInSeconds'],
  ['--notification-interval <seconds>', 'notificationElapsedTimeInSeconds'],
  ['--number-of-failures <n>', 'numberOfFailures'],
  ['--days-in-past <days>', 'daysInPast'],
];

/** `geohook admin settings`: the organisation-wide delivery settings. */
export function registerAdminSettings(admin: Command): void {
  const settings = admin
    .command('settings')
    .description('show the organisation-wide delivery settings, or change them from --file and/or flags')
    .option('--file <settings.json>', 'JSON object with any of the five settings');
  for (const [flag, field] of settingFlags) settings.addOption(new Option(flag, field).argParser(integer));
  settings.action(async (_options: unknown, command: Command) => {
    const flags = flagsOf(command);
    const changes: Partial<WebhookSettings> =
      flags.file === undefined ? {} : ((await readJsonFile(flags.file as string, '--file')) as Partial<WebhookSettings>);
    for (const [, field] of settingFlags) if (flags[field] !== undefined) changes[field] = flags[field] as number;
    const client = await adminClientFrom(flags);
    printResult(Object.keys(changes).length === 0 ? await client.settings.get() : await client.settings.set(changes), flags);
  });
}
