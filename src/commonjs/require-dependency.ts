import { createRequire } from 'node:module';

/**
 * `require` for geohook's CommonJS dependencies (this folder's modules). Node's ESM loader, importing a CommonJS
 * package, first reads each of its files again and scans it for named exports; `require` loads the same modules without
 * that scan. For BullMQ, ioredis, Fastify and JSONata together the scan costs a process 0.2 to 0.4 CPU-seconds at every
 * start (docs/performance.md#start-up).
 */
export const requireDependency = createRequire(import.meta.url);

/**
 * A loader of a dependency that only some configurations use (a mirror, a stream route, a relay route, a terminal's
 * log lines): the package is loaded with `require` at the loader's first call, not when geohook starts, so a
 * process that never uses it never pays for it (docs/performance.md#start-up). Later calls return the same object.
 */
export function onFirstUse<T>(id: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= requireDependency(id) as T);
}
