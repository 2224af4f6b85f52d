import closeWithGrace from 'close-with-grace';
import type { Command } from 'commander';
import type { StartServerOptions } from '../server.js';
import { addConfigOptions, configOverrides } from './config-options.js';

/** How long a shutdown may take before the process exits anyway. */
const SHUTDOWN_GRACE_MS = 10_000;

/** Runs the receiver until SIGTERM/SIGINT, then shuts it down gracefully. */
export async function runReceiverUntilSignal(options: Record<string, string | undefined>, serverOptions: StartServerOptions): Promise<void> {
  // Loaded here rather than at the top so that `--help`, `sign` and `send` start quickly.
  const [{ loadConfig }, { startServer }] = await Promise.all([import('../config/load-config.js'), import('../server.js')]);
  const config = loadConfig(process.env, configOverrides(options));
  const server = await startServer(config, serverOptions);
  closeWithGrace({ delay: SHUTDOWN_GRACE_MS }, async ({ signal, err }) => {
    if (err !== undefined) server.logger.error({ err }, 'shutting down after an error');
    else server.logger.info({ signal }, 'shutting down');
    await server.close();
  });
}

/** `geohook serve`: the receiver alone. */
export function registerServe(program: Command): void {
  addConfigOptions(
    program
      .command('serve')
      .description('run the receiver (an embedded redis-server is started when REDIS_URL is unset)'),
  ).action((options: Record<string, string | undefined>) => runReceiverUntilSignal(options, { logDestination: 1 }));
}
