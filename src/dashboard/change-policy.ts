import type { DashboardChanges } from '../config/load-config.js';

/**
 * The calls of Bull Board's API that move jobs between states and nothing else: retry, remove ("clean") and
 * promote, one job or every job of a state. Routes as Fastify names them, below the dashboard's prefix.
 */
const JOB_CHANGES: ReadonlySet<string> = new Set([
  'PUT /api/queues/:queueName/:jobId/retry',
  'PUT /api/queues/:queueName/:jobId/clean',
  'PUT /api/queues/:queueName/:jobId/promote',
  'PUT /api/queues/:queueName/retry/:queueStatus',
  'PUT /api/queues/:queueName/clean/:queueStatus',
  'PUT /api/queues/:queueName/promote',
]);

const READS: ReadonlySet<string> = new Set(['GET', 'HEAD']);

/**
 * True when the dashboard takes a request for `route` (Fastify's route URL below the dashboard's prefix,
 * `/api/queues/:queueName/:jobId/retry`, so that no spelling of the path can pass for another route) under
 * `changes`. Reads always pass; `jobs` adds {@link JOB_CHANGES}; `all` passes everything. Anything else, among
 * it adding jobs, editing their data, pausing, emptying or obliterating a queue and the job schedulers, is
 * refused: an event planted on the board would reach consumers as if the GIS server had sent it.
 */
export function allowsChange(changes: DashboardChanges, method: string, route: string): boolean {
  if (READS.has(method) || changes === 'all') return true;
  return changes === 'jobs' && JOB_CHANGES.has(`${method} ${route}`);
}
