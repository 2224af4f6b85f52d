import type { Logger } from 'pino';
import type { ServiceName } from '../arcgis/service-name.js';
import { checkGenerations, type GenerationCheckOptions } from './generation-check.js';

/** Options of {@link startPoller}. */
export interface PollerOptions extends Omit<GenerationCheckOptions, 'source'> {
  /** Feature services polled (POLL). */
  services: readonly ServiceName[];
  /** Pause between two polls of every service (POLL_INTERVAL_SECONDS). */
  intervalMs: number;
  logger: Logger;
}

/** A running poll; `close` stops it and waits for the poll in progress. */
export interface Poller {
  close(): Promise<void>;
}

/**
 * Poll mode (docs/backfill.md#poll-mode): every `intervalMs`, reads each service's current generations and
 * records the range since the last poll, which the backfill worker turns into one feature event
 * (`source: "poll"`) when it holds edits. No webhook and no inbound connection are needed; with webhooks on
 * the same services too, each range is still handed over once. The first poll of a service starts its
 * watermark. A failed poll is logged and tried again at the next interval.
 */
export function startPoller(options: PollerOptions): Poller {
  const log = options.logger.child({ component: 'poll' });
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let closed = false;
  const pollAll = async (): Promise<void> => {
    for (const service of options.services) {
      if (closed) return;
      await checkGenerations(service, { ...options, source: 'poll' }).catch((err: unknown) => log.warn({ err, service }, 'poll failed'));
    }
  };
  const schedule = (delayMs: number): void => {
    if (closed) return;
    timer = setTimeout(() => {
      running = pollAll().finally(() => {
        running = undefined;
        schedule(options.intervalMs);
      });
    }, delayMs);
    timer.unref();
  };
  schedule(0);
  return {
    async close() {
      closed = true;
      clearTimeout(timer);
      await running;
    },
  };
}
