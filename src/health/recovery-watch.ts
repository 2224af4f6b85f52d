import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { ServiceName } from '../arcgis/service-name.js';
import type { PendingScopes } from './pending-scopes.js';

/** Options of {@link createRecoveryWatch}. */
export interface RecoveryWatchOptions {
  /** The scopes of the pending backfill jobs. */
  pendingScopes: PendingScopes;
  /** The hook registered: a service's scopes are `<hook> <service>` and `<hook> <service>#<layer id>`. */
  hook: string;
  /** Called once no job of a watched service is pending; its failure is logged. */
  onRecovered: (service: ServiceName, webhookId: string) => Promise<void>;
  logger: Logger;
  /** Longest wait for the gaps of one service. */
  timeoutMs: number;
  /** Between two reads of the pending jobs. */
  pollMs: number;
}

/** Services waiting for their gaps to be filled, watched by one loop. */
export interface RecoveryWatch {
  /** Watches `service` until no backfill job of it is pending; a service already watched is left as it is. */
  add(service: ServiceName, webhookId: string): void;
  has(service: ServiceName): boolean;
  /** Stops the loop and waits for it (and the confirmations it started) to end. */
  close(): Promise<void>;
}

interface Watched {
  webhookId: string;
  deadline: number;
}

/**
 * One loop for every service whose webhook was reactivated: each tick reads the pending backfill jobs' scopes once
 * ({@link PendingScopes}: one command plus one per new job), then confirms each watched service none of them is
 * about. The cost is linear in services and gaps, whatever number recover at once. The loop runs only while some
 * service is watched.
 */
export function createRecoveryWatch(options: RecoveryWatchOptions): RecoveryWatch {
  const log = options.logger;
  const watched = new Map<ServiceName, Watched>();
  const abort = new AbortController();
  let loop: Promise<void> | undefined;

  const serviceOf = (scope: string): string => {
    const service = scope.slice(options.hook.length + 1);
    const layer = service.lastIndexOf('#');
    return layer === -1 ? service : service.slice(0, layer);
  };

  async function tick(): Promise<void> {
    // Only services watched before the jobs are listed: a later one's gap may have been added after the listing.
    const candidates = [...watched];
    const pending = new Set(
      [...(await options.pendingScopes.read())].filter((scope) => scope.startsWith(`${options.hook} `)).map(serviceOf),
    );
    const now = Date.now();
    const confirmations: Promise<void>[] = [];
    for (const [service, { webhookId, deadline }] of candidates) {
      if (pending.has(service) && now <= deadline) continue;
      watched.delete(service);
      if (pending.has(service)) log.warn({ service }, 'the gaps of a reactivated webhook are still being filled');
      else
        confirmations.push(
          options.onRecovered(service, webhookId).catch((err: unknown) => log.warn({ err, service }, 'recovery not confirmed')),
        );
    }
    await Promise.all(confirmations);
  }

  async function run(): Promise<void> {
    while (watched.size > 0 && !abort.signal.aborted) {
      try {
        await tick();
        if (watched.size > 0) await sleep(options.pollMs, undefined, { signal: abort.signal });
      } catch (err) {
        if (abort.signal.aborted) return;
        log.warn({ err }, 'recovery not confirmed: retrying');
        await sleep(options.pollMs, undefined, { signal: abort.signal }).catch(() => undefined);
      }
    }
  }

  const start = (): void => {
    loop ??= run().finally(() => {
      loop = undefined;
      // A service added while the loop was ending.
      if (watched.size > 0 && !abort.signal.aborted) start();
    });
  };

  return {
    add(service, webhookId) {
      if (watched.has(service) || abort.signal.aborted) return;
      watched.set(service, { webhookId, deadline: Date.now() + options.timeoutMs });
      start();
    },
    has: (service) => watched.has(service),
    async close() {
      abort.abort();
      await loop;
    },
  };
}
