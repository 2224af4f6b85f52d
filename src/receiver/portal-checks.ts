import { createHash } from 'node:crypto';
import { GeohookError } from '../errors.js';
import { portalUserOf } from './portal-token.js';

/** Options of {@link createPortalChecks}. */
export interface PortalChecksOptions {
  /** The portal that checks tokens (configuration only). */
  portalUrl: string;
  /** Token checks per second a hook may ask of the portal, past its burst. @defaultValue 10 */
  checksPerSecond?: number;
  /** Token checks a hook may ask at once. @defaultValue 50 */
  burst?: number;
  /** Tokens the portal refused, kept (by their SHA-256) so that sending one again asks nothing of it. @defaultValue 1000 */
  refusedKept?: number;
  /** How long a refused token is kept. @defaultValue 600000 (10 minutes) */
  refusedForMs?: number;
  /** @defaultValue globalThis.fetch */
  fetch?: typeof fetch;
  /** The clock, in milliseconds. @defaultValue Date.now */
  now?: () => number;
}

/** A hook's budget of portal checks: a token bucket. */
interface Budget {
  tokens: number;
  atMs: number;
}

/** Checks a Survey123 token: resolves with its user, or rejects with a coded GeohookError. */
export type PortalCheck = (hook: string, token: string) => Promise<string>;

/**
 * The portal checks of Survey123 webhooks (docs/submissions.md), bounded: a webhook costs no request to the portal
 * when its token was refused already (kept a while, by its hash: `GEOHOOK_ERR_PORTAL_TOKEN` at once), and a hook's
 * checks are a token bucket (`burst`, refilled at `checksPerSecond`): past it, `GEOHOOK_ERR_PORTAL_UNAVAILABLE`
 * without a request, which Survey123 may send again (the submission closes by its window meanwhile). However many
 * unauthenticated posts come, the portal is asked at most `burst` plus `checksPerSecond` a second per hook.
 */
export function createPortalChecks(options: PortalChecksOptions): PortalCheck {
  const now = options.now ?? Date.now;
  const checksPerSecond = options.checksPerSecond ?? 10;
  const burst = options.burst ?? 50;
  const refusedKept = options.refusedKept ?? 1000;
  const refusedForMs = options.refusedForMs ?? 600_000;
  /** SHA-256 of a refused token → until when it is kept; in the order they were refused. */
  const refused = new Map<string, number>();
  const budgets = new Map<string, Budget>();

  const spend = (hook: string): boolean => {
    const atMs = now();
    const budget = budgets.get(hook) ?? { tokens: burst, atMs };
    budget.tokens = Math.min(burst, budget.tokens + ((atMs - budget.atMs) / 1000) * checksPerSecond);
    budget.atMs = atMs;
    budgets.set(hook, budget);
    if (budget.tokens < 1) return false;
    budget.tokens -= 1;
    return true;
  };

  return async (hook, token) => {
    const hash = createHash('sha256').update(token).digest('hex');
    const keptUntil = refused.get(hash);
    if (keptUntil !== undefined && keptUntil > now())
      throw new GeohookError('GEOHOOK_ERR_PORTAL_TOKEN', 'the portal refused this Survey123 token already');
    refused.delete(hash);
    if (!spend(hook))
      throw new GeohookError('GEOHOOK_ERR_PORTAL_UNAVAILABLE', 'too many Survey123 tokens to check for this hook: send it again later');
    try {
      return await portalUserOf(options.portalUrl, token, options.fetch);
    } catch (err) {
      if (err instanceof GeohookError && err.code === 'GEOHOOK_ERR_PORTAL_TOKEN') {
        refused.set(hash, now() + refusedForMs);
        // The oldest refusal goes first once the cache is full.
        if (refused.size > refusedKept) refused.delete(refused.keys().next().value!);
      }
      throw err;
    }
  };
}
