import type { Worker } from 'bullmq';
import type { Logger } from 'pino';
import { createWarningLimiter } from '../warning-limiter.js';

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
 * milliseconds and the server reports itself, is said once a minute at most, as a warning, the next saying how many
 * it left out (`suppressed`); anything else, each time, as an error.
 */
export function logWorkerErrors(worker: Worker, log: Logger, message: string): void {
  const warnings = createWarningLimiter(log, CONNECTION_TROUBLE_EVERY_MS);
  worker.on('error', (err) => {
    if (!isConnectionTrouble(err)) return void log.error({ err }, message);
    warnings.warn({ err }, `${message}: Redis unreachable, BullMQ retries (said once a minute at most)`);
  });
}
