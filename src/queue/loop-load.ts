import { performance } from 'node:perf_hooks';

/** The process's time so far, ms: its event loop's running callbacks (`active`) and waiting for work (`idle`), its CPU. */
export interface ProcessTime {
  readonly active: number;
  readonly idle: number;
  readonly cpu: number;
}

/** The event loop's time (`performance.eventLoopUtilization`) and the CPU time of the process (user and system). */
export function processTime(): ProcessTime {
  const { active, idle } = performance.eventLoopUtilization();
  const { user, system } = process.cpuUsage();
  return { active, idle, cpu: (user + system) / 1000 };
}

/** Options of {@link LoopLoad}. */
export interface LoopLoadOptions {
  /** The window over which the loop's busy share is measured, ms. @defaultValue 250 */
  windowMs?: number;
  /** Share of a window the event loop must have run callbacks for. @defaultValue 0.9 */
  busyShare?: number;
  /** Share of a window the process must have run on a core. @defaultValue 0.5 */
  cpuShare?: number;
  /** The process's time so far (tests). @defaultValue {@link processTime} */
  time?: () => ProcessTime;
}

/**
 * Whether this process runs at its capacity: its event loop spent the last window running callbacks, with no time
 * left waiting for work, and the process ran on a core for half of it at least. Waiting on Redis or the network
 * leaves the loop idle, so a slow round trip is not this; nor is a loop stretched by waiting for a core on a busy
 * machine (it gets little CPU). Deliveries coming faster than the process answers them are.
 */
export class LoopLoad {
  readonly #windowMs: number;
  readonly #busyShare: number;
  readonly #cpuShare: number;
  readonly #time: () => ProcessTime;
  #start: ProcessTime;
  #busy = false;

  constructor(options: LoopLoadOptions = {}) {
    this.#windowMs = options.windowMs ?? 250;
    this.#busyShare = options.busyShare ?? 0.9;
    this.#cpuShare = options.cpuShare ?? 0.5;
    this.#time = options.time ?? processTime;
    this.#start = this.#time();
  }

  /** Whether the last whole window was busy for the shares; the verdict holds until the next window ends. */
  get busy(): boolean {
    const now = this.#time();
    const active = now.active - this.#start.active;
    const elapsed = active + now.idle - this.#start.idle;
    if (elapsed >= this.#windowMs) {
      this.#busy = active >= this.#busyShare * elapsed && now.cpu - this.#start.cpu >= this.#cpuShare * elapsed;
      this.#start = now;
    }
    return this.#busy;
  }
}
