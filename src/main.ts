import type { Command } from 'commander';
import { addConfigOptions } from './cli/config-options.js';
import { runReceiverUntilSignal } from './cli/serve.js';

/**
 * `geohook up`, what `npm start` runs: everything on one machine. Today that is an embedded redis-server
 * (when REDIS_URL is unset) and the receiver; logs go to stderr so that stdout can carry events.
 */
export function registerUp(program: Command): void {
  addConfigOptions(
    program.command('up').description('run everything on one machine: embedded Redis when REDIS_URL is unset, and the receiver'),
  ).action((options: Record<string, string | undefined>) => runReceiverUntilSignal(options, { logDestination: 2 }));
}
