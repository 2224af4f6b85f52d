import type { Command } from 'commander';
import { loadConfig, type ConfigOverrides } from '../config/load-config.js';
import { GeohookError } from '../errors.js';
import { checkConfiguredFilters, configuredFilters } from '../fanout/configured-filters.js';
import { formatFilterIssue } from '../fanout/filter-check.js';
import { configOption } from './config-options.js';
import { printJson, printLine } from './print.js';
import { readUpRecord } from './up-record.js';

interface CheckFlags {
  config?: string;
  json?: boolean;
}

/** One mistake as `config check --json` gives it. */
interface CheckError {
  code: string;
  message: string;
  owner?: string;
  part?: string;
  clause?: string;
}

/**
 * `geohook config check`: loads the configuration as start-up does (every variable and GEOHOOK_CONFIG), then reads
 * the layer definitions of the followed services and checks each relay route's and subscription's filter against
 * them. Starts nothing. Exit 0 when all hold, 1 otherwise (docs/cli.md#config-check).
 */
async function runCheck(flags: CheckFlags): Promise<void> {
  const overrides: ConfigOverrides = { GEOHOOK_CONFIG: flags.config };
  // With no ADMIN_URL, the `geohook up` running here is checked: its emulator is the server.
  const up = process.env.ADMIN_URL?.trim() ? undefined : readUpRecord();
  const errors: CheckError[] = [];
  let summary = { routes: 0, subscriptions: 0, services: [] as string[] };
  try {
    const config = loadConfig(
      process.env,
      up === undefined ? overrides : { ...up.settings, ...(flags.config === undefined ? {} : overrides) },
    );
    const { issues, unread, read } = await checkConfiguredFilters(config);
    summary = { routes: config.relays.length, subscriptions: config.subscriptions.length, services: read };
    for (const issue of issues) errors.push({ code: 'GEOHOOK_ERR_FILTER_CANNOT_MATCH', ...issue, message: formatFilterIssue(issue) });
    for (const { service, error } of unread)
      errors.push({
        code: error instanceof GeohookError ? error.code : 'GEOHOOK_ERR_ADMIN_API',
        message: `${service}: its layer definitions could not be read, so the filters of its routes are not checked: ${error.message}`,
      });
    if (configuredFilters(config).length === 0 && !flags.json) printLine('no relay route or subscription to check');
  } catch (err) {
    if (!(err instanceof GeohookError)) throw err;
    errors.push({ code: err.code, message: err.message });
  }
  if (flags.json === true) printJson({ ok: errors.length === 0, errors, checked: summary });
  else {
    for (const error of errors) printLine(`✗ ${error.code}: ${error.message}`);
    if (errors.length === 0)
      printLine(
        `✓ the configuration holds: ${summary.routes} relay routes and ${summary.subscriptions} subscriptions, checked against ${
          summary.services.length === 0 ? 'no layer (no filter reads rows, or no service is followed)' : summary.services.join(', ')
        }`,
      );
  }
  process.exitCode = errors.length === 0 ? 0 : 1;
}

/** `geohook config`: `check`, the configuration and its filters checked without starting anything. */
export function registerConfig(command: Command): void {
  command
    .command('check')
    .description("check the configuration, and every relay route's and subscription's filter against the layers it reads, starting nothing")
    .addOption(configOption('GEOHOOK_CONFIG'))
    .option('--json', 'print the outcome as one JSON document: {ok, errors: [{code, message, owner, part, clause}], checked}')
    .action((_options: unknown, cmd: Command) => runCheck(cmd.opts<CheckFlags>()));
}
