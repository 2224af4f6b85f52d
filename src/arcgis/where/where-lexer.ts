import { invalidWhere } from './where-error.js';

/** A token of a `where` clause: a word (keyword or field name), a quoted name, a string, a number or a symbol. */
export type Token =
  | { type: 'word'; text: string; at: number }
  | { type: 'name'; text: string; at: number; qualifier?: string }
  | { type: 'string'; text: string; at: number }
  | { type: 'number'; text: string; at: number }
  | { type: 'symbol'; text: string; at: number };

const SPACE = /\s+/y;
const WORD = /[A-Za-z_][A-Za-z0-9_]*/y;
const NUMBER = /(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/y;
const SYMBOL = /<>|!=|<=|>=|[=<>(),+-]/y;

/** The text of a single-quoted string starting at `at` (`''` is a quote), and where it ends. */
function readString(where: string, at: number): { text: string; end: number } {
  let text = '';
  let from = at + 1;
  for (;;) {
    const quote = where.indexOf("'", from);
    if (quote === -1) throw invalidWhere(`unterminated string at character ${at + 1}`);
    text += where.slice(from, quote);
    if (where[quote + 1] !== "'") return { text, end: quote + 1 };
    text += "'";
    from = quote + 2;
  }
}

/** The text of a double-quoted field name starting at `at`, and where it ends. */
function readName(where: string, at: number): { text: string; end: number } {
  const close = where.indexOf('"', at + 1);
  if (close === -1) throw invalidWhere(`unterminated quoted name at character ${at + 1}`);
  return { text: where.slice(at + 1, close), end: close + 1 };
}

/** `qualifier.name` or `qualifier."name"` starting at `at` (a transition filter's `before.status`): a name token with its qualifier. */
function readQualified(where: string, at: number, qualifier: string): { token: Token; end: number } {
  const from = at + qualifier.length + 1;
  if (where[from] === '"') {
    const { text, end } = readName(where, from);
    return { token: { type: 'name', text, at, qualifier }, end };
  }
  const name = matchAt(WORD, where, from);
  if (name === undefined) throw invalidWhere(`expected a field name after '${qualifier}.' at character ${from + 1}`);
  return { token: { type: 'name', text: name, at, qualifier }, end: from + name.length };
}

/** Matches `pattern` (a sticky regular expression) at `at`: the text matched, or undefined. */
function matchAt(pattern: RegExp, where: string, at: number): string | undefined {
  pattern.lastIndex = at;
  return pattern.exec(where)?.[0];
}

/** Splits a `where` clause into tokens; a character no token starts with is a 400 naming it. */
export function tokenize(where: string): Token[] {
  const tokens: Token[] = [];
  let at = 0;
  while (at < where.length) {
    const space = matchAt(SPACE, where, at);
    if (space !== undefined) {
      at += space.length;
      continue;
    }
    const char = where[at];
    if (char === "'" || char === '"') {
      const { text, end } = char === "'" ? readString(where, at) : readName(where, at);
      tokens.push({ type: char === "'" ? 'string' : 'name', text, at });
      at = end;
      continue;
    }
    const word = matchAt(WORD, where, at);
    if (word !== undefined && where[at + word.length] === '.') {
      const qualified = readQualified(where, at, word);
      tokens.push(qualified.token);
      at = qualified.end;
      continue;
    }
    const number = word === undefined ? matchAt(NUMBER, where, at) : undefined;
    const symbol = word === undefined && number === undefined ? matchAt(SYMBOL, where, at) : undefined;
    const text = word ?? number ?? symbol;
    if (text === undefined) throw invalidWhere(`unexpected character '${char}' at character ${at + 1}`);
    tokens.push({ type: word !== undefined ? 'word' : number !== undefined ? 'number' : 'symbol', text, at });
    at += text.length;
  }
  return tokens;
}
