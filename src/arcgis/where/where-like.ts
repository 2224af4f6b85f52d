import { compileWildcards } from '../wildcards.js';

/**
 * A SQL `LIKE` pattern as a test: `%` matches any run of characters, `_` exactly one, every other character
 * itself (regular-expression characters included), case-sensitively. There is no `ESCAPE` character. It takes
 * at most (length of value × length of pattern) steps whatever the pattern.
 */
export const compileLike = (pattern: string): ((value: string) => boolean) => compileWildcards(pattern, { many: '%', one: '_' });
