/** Options of {@link LoginLimiter}. */
export interface LoginLimiterOptions {
  /** Wrong credentials from one address that cost nothing. @defaultValue 10 */
  freeFailures?: number;
  /** The wait imposed by the first failure past the free ones; each further one doubles it. @defaultValue 1000 */
  firstDelayMs?: number;
  /** The longest wait. @defaultValue 300000 (5 minutes) */
  maxDelayMs?: number;
  /** An address is forgotten this long after its last failure. @defaultValue 3600000 (1 hour) */
  forgetAfterMs?: number;
  /** Addresses remembered at most; past it, the one whose last failure is oldest is forgotten. @defaultValue 10000 */
  maxAddresses?: number;
  /** The clock, in milliseconds. @defaultValue Date.now */
  now?: () => number;
}

interface Failures {
  count: number;
  lastMs: number;
  /** When the next attempt may be made. */
  nextAttemptMs: number;
}

/**
 * The key of a client address: IPv4 as it is (also when written as IPv4-mapped IPv6), IPv6 by its /64
 * prefix, since one host usually holds a whole /64.
 */
export function addressKey(ip: string): string {
  const address = ip.replace(/%.*$/, '').toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (mapped !== null) return mapped[1]!;
  if (!address.includes(':')) return address;
  const [head = '', tail = ''] = address.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === '' ? [] : tail.split(':');
  const zeros = Array.from({ length: Math.max(0, 8 - headGroups.length - tailGroups.length) }, () => '0');
  const groups = address.includes('::') ? [...headGroups, ...zeros, ...tailGroups] : headGroups;
  return `${groups
    .slice(0, 4)
    .map((group) => parseInt(group, 16).toString(16))
    .join(':')}::/64`;
}

/**
 * Slows down guessing of the dashboard's credentials, per client address: the first `freeFailures` wrong
 * attempts cost nothing; each further one makes the address wait before its next attempt, 1 s, then twice as
 * long each time up to 5 minutes (by default). The caller checks the credentials first, in constant time, and
 * asks the limiter only about wrong ones: the right credentials go through even while their address waits, so
 * that a guesser behind the same proxy cannot lock the administrators out. A success does not forget the
 * failures (it would give a guesser at the same address new free attempts); an hour without one does. The
 * memory is bounded: at most `maxAddresses` addresses.
 */
export class LoginLimiter {
  readonly #freeFailures: number;
  readonly #firstDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #forgetAfterMs: number;
  readonly #maxAddresses: number;
  readonly #now: () => number;
  /** In the order of their last failure, oldest first. */
  readonly #failures = new Map<string, Failures>();

  constructor(options: LoginLimiterOptions = {}) {
    this.#freeFailures = options.freeFailures ?? 10;
    this.#firstDelayMs = options.firstDelayMs ?? 1000;
    this.#maxDelayMs = options.maxDelayMs ?? 300_000;
    this.#forgetAfterMs = options.forgetAfterMs ?? 3_600_000;
    this.#maxAddresses = options.maxAddresses ?? 10_000;
    this.#now = options.now ?? Date.now;
  }

  /** Whole seconds `ip` must still wait before its next attempt; 0 when it may try now. */
  waitSeconds(ip: string): number {
    const key = addressKey(ip);
    const failures = this.#failures.get(key);
    if (failures === undefined) return 0;
    const now = this.#now();
    if (now - failures.lastMs >= this.#forgetAfterMs) {
      this.#failures.delete(key);
      return 0;
    }
    return Math.max(0, Math.ceil((failures.nextAttemptMs - now) / 1000));
  }

  /** Records a wrong attempt from `ip`; returns the whole seconds it must now wait (0 while failures are free). */
  failed(ip: string): number {
    const key = addressKey(ip);
    const now = this.#now();
    const earlier = this.#failures.get(key);
    const count = earlier === undefined || now - earlier.lastMs >= this.#forgetAfterMs ? 1 : earlier.count + 1;
    const past = count - this.#freeFailures;
    const delayMs = past <= 0 ? 0 : Math.min(this.#maxDelayMs, this.#firstDelayMs * 2 ** Math.min(past - 1, 30));
    // Deleted first, so that the map's order stays that of the last failures.
    this.#failures.delete(key);
    this.#failures.set(key, { count, lastMs: now, nextAttemptMs: now + delayMs });
    if (this.#failures.size > this.#maxAddresses) this.#failures.delete(this.#failures.keys().next().value!);
    return Math.ceil(delayMs / 1000);
  }
}
