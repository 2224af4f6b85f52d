import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the old generation grow past what survived its last full collection, in percent: its limit is
 * twice the live heap. V8's own factor (up to four times while collections are fast) lets a long-running process's
 * RSS climb by the garbage of its in-flight objects (docs/performance.md#memory).
 */
export const HEAP_GROWING_PERCENT = 100;

/** The V8 option {@link boundHeapGrowth} sets. */
const OPTION = '--heap-growing-percent';

/**
 * Bounds the heap growth of this process to {@link HEAP_GROWING_PERCENT}, before it starts its work; a process
 * started with `node --heap-growing-percent=N` keeps what it was given.
 */
export function boundHeapGrowth(execArgv: readonly string[] = process.execArgv): void {
  if (execArgv.some((arg) => arg === OPTION || arg.startsWith(`${OPTION}=`))) return;
  setFlagsFromString(`${OPTION}=${HEAP_GROWING_PERCENT}`);
}
