/** The wildcard characters of a pattern: `many` matches any run of characters (none included), `one` exactly one. */
export interface Wildcards {
  many: string;
  one: string;
}

/** The characters of `text`, indexable one by one: code points when it holds surrogate pairs, else its code units. */
export const charsOf = (text: string): ArrayLike<string> => (/[\uD800-\uDFFF]/.test(text) ? Array.from(text) : text);

/**
 * Whether `value` matches `pattern`: greedy matching that backtracks only to the last `many` wildcard, so that it
 * reads at most (length of value × length of pattern) characters whatever the pattern, and a number proportional to
 * the value's length for a pattern whose runs between wildcards are short. No regular expression to blow up.
 */
export function matchesWildcards(value: ArrayLike<string>, pattern: ArrayLike<string>, { many, one }: Wildcards): boolean {
  let v = 0;
  let p = 0;
  let star = -1;
  let resume = 0;
  while (v < value.length) {
    const char = pattern[p];
    if (char === many) {
      star = p++;
      resume = v;
    } else if (char !== undefined && (char === one || char === value[v])) {
      v++;
      p++;
    } else if (star !== -1) {
      p = star + 1;
      v = ++resume;
    } else {
      return false;
    }
  }
  while (pattern[p] === many) p++;
  return p === pattern.length;
}

/** `pattern` as a test of whole values, case-sensitive: its wildcards as {@link matchesWildcards} reads them, every other character itself. */
export function compileWildcards(pattern: string, wildcards: Wildcards): (value: string) => boolean {
  if (!pattern.includes(wildcards.many) && !pattern.includes(wildcards.one)) return (value) => value === pattern;
  const chars = charsOf(pattern);
  return (value) => matchesWildcards(charsOf(value), chars, wildcards);
}
