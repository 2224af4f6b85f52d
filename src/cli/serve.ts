import type { Command } from 'commander';
import { loadConfig } from '../config/load-config.js';
import { mirrorServerOf } from '../config/mirror-schema.js';
import { startServer } from '../server.js';
import { closeOnSignal } from './close-on-signal.js';
import { addConfigOptions, configOverrides } from './config-options.js';

/** Runs the receiver until SIGTERM/SIGINT, then shuts it down gracefully. */
async function runServe(options: Record<string, string | undefined>): Promise<void> {
  const config = loadConfig(process.env, configOverrides(options));
  // A mirror with no server or no database is refused before anything starts.
  if (config.mirror !== undefined) mirrorServerOf(config.mirror, config.admin?.url);
  const server = await startServer(config, { logDestination: 1 });
  closeOnSignal(server.logger, () => server.close());
}

/** `geohook serve`: the receiver alone. */
export function registerServe(command: Command): void {
  addConfigOptions(command).action((options: Record<string, string | undefined>) => runServe(options));
}
