/** The characters of `text`, indexable one by one: code points when it holds surrogate pairs, else its code units. */
const charsOf = (text: string): ArrayLike<string> => (/[\uD800-\uDFFF]/.test(text) ? Array.from(text) : text);

/**
 * Whether `value` matches `pattern`: greedy matching that backtracks only to the last `%`, so that it takes at
 * most (length of value × length of pattern) steps whatever the pattern (no regular expression to blow up).
 */
function matches(value: ArrayLike<string>, pattern: ArrayLike<string>): boolean {
  let v = 0;
  let p = 0;
  let star = -1;
  let resume = 0;
  while (v < value.length) {
    const char = pattern[p];
    if (char === '%') {
      star = p++;
      resume = v;
    } else if (char !== undefined && (char === '_' || char === value[v])) {
      v++;
      p++;
    } else if (star !== -1) {
      p = star + 1;
      v = ++resume;
    } else {
      return false;
    }
  }
  while (pattern[p] === '%') p++;
  return p === pattern.length;
}

/**
 * A SQL `LIKE` pattern as a test: `%` matches any run of characters, `_` exactly one, every other character
 * itself (regular-expression characters included), case-sensitively. There is no `ESCAPE` character.
 */
export function compileLike(pattern: string): (value: string) => boolean {
  if (!/[%_]/.test(pattern)) return (value) => value === pattern;
  const chars = charsOf(pattern);
  return (value) => matches(charsOf(value), chars);
}
