/** Scopes whose server said their service is not there: none of them is read again for a while. */
export interface AbsentScopes {
  has(scope: string): boolean;
  add(scope: string): void;
}

/** {@link AbsentScopes} that forgets a scope `forMs` after it was added (the oldest are dropped first). */
export function createAbsentScopes(forMs: number, now: () => number = Date.now): AbsentScopes {
  // Insertion order is expiry order: each scope is re-inserted when added again.
  const until = new Map<string, number>();
  const prune = (at: number): void => {
    for (const [scope, expiry] of until) {
      if (expiry > at) return;
      until.delete(scope);
    }
  };
  return {
    has(scope) {
      prune(now());
      return until.has(scope);
    },
    add(scope) {
      const at = now();
      prune(at);
      until.delete(scope);
      until.set(scope, at + forMs);
    },
  };
}
