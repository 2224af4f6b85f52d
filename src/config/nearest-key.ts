/** The edit distance of two words: insertions, deletions and substitutions, one each. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * The known key `key` was most likely meant to be: the nearest by edit distance (case aside), within a third of its
 * length (at least 1), else one it starts or is the start of (`timeout` for `timeoutMs`); `undefined` when none is near.
 */
export function nearestKey(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  let nearest: { key: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(lower, candidate.toLowerCase());
    if (nearest === undefined || distance < nearest.distance) nearest = { key: candidate, distance };
  }
  if (nearest !== undefined && nearest.distance <= Math.max(1, Math.floor(key.length / 3))) return nearest.key;
  if (lower.length < 4) return undefined;
  return known.find((candidate) => candidate.toLowerCase().startsWith(lower) || lower.startsWith(candidate.toLowerCase()));
}

/** The plurals `key` may be the singular of: `type` → `types`, `address` → `addresses`, `policy` → `policies`. */
export function pluralsOf(key: string): string[] {
  return [`${key}s`, `${key}es`, ...(key.endsWith('y') ? [`${key.slice(0, -1)}ies`] : [])];
}
