import { createRequire } from 'node:module';

/**
 * `require` for geohook's CommonJS dependencies (this folder's modules). Node's ESM loader, importing a CommonJS
 * package, first reads each of its files again and scans it for named exports; `require` loads the same modules without
 * that scan. For BullMQ, ioredis, Fastify and JSONata together the scan costs a process 0.2 to 0.4 CPU-seconds at every
 * start (docs/performance.md#start-up).
 */
export const requireDependency = createRequire(import.meta.url);
