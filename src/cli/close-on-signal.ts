import closeWithGrace from 'close-with-grace';
import type { BaseLogger } from 'pino';

/** How long a shutdown may take before the process exits anyway. */
const SHUTDOWN_GRACE_MS = 10_000;

/**
 * Runs `close` once on SIGTERM, SIGINT or an uncaught error, logging why, and exits: a command's graceful
 * shutdown (in-flight work finished, connections closed), cut short after {@link SHUTDOWN_GRACE_MS}.
 */
export function closeOnSignal(log: Pick<BaseLogger, 'info' | 'error'>, close: () => Promise<void>): void {
  closeWithGrace({ delay: SHUTDOWN_GRACE_MS }, async ({ signal, err }) => {
    if (err !== undefined) log.error({ err }, 'shutting down after an error');
    else log.info({ signal }, 'shutting down');
    await close();
  });
}
