import type * as BullMQ from 'bullmq';
import { requireDependency } from './require-dependency.js';

/** BullMQ's values (`new bullmq.Worker(…)`), loaded with `require`; its types come from `import type { … } from 'bullmq'`. */
export const bullmq = requireDependency('bullmq') as typeof BullMQ;
