import type { Worker } from 'bullmq';
import type { Logger } from 'pino';

/** How often a worker says that Redis is still unreachable, at most. */
const CONNECTION_TROUBLE_EVERY_MS = 60_000;

/** The codes and messages of an unreachable Redis (ioredis's and the operating system's). */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
const CONNECTION_MESSAGES = /Connection is closed|sentinels are unreachable|Stream isn't writeable|Reached the max retries/;

const isConnectionTrouble = (err: Error): boolean =>
  CONNECTION_CODES.has((err as NodeJS.ErrnoException).code ?? '') || CONNECTION_MESSAGES.test(err.message);

/**
 * Logs the errors a BullMQ worker emits as `message`. An unreachable Redis, which the worker retries every few hundred
 * milliseconds and the server reports itself, is said once a minute at most, as a warning; anything else, each time.
 */
export function logWorkerErrors(worker: Worker, log: Logger, message: string): void {
  let saidAt = Number.NEGATIVE_INFINITY;
  worker.on('error', (err) => {
    if (!isConnectionTrouble(err)) return void log.error({ err }, message);
    const now = Date.now();
    if (now - saidAt < CONNECTION_TROUBLE_EVERY_MS) return;
    saidAt = now;
    log.warn({ err }, `${message}: Redis unreachable, BullMQ retries (said once a minute at most)`);
  });
}
