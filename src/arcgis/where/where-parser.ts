import { invalidWhere } from './where-error.js';
import { tokenize, type Token } from './where-lexer.js';
import { parseInstant, parseNumber } from './where-values.js';

/** A value written in the clause: a string (its type decided by what it is compared with), a number, or an instant. */
export type Literal = { type: 'string'; value: string } | { type: 'number'; value: number | bigint } | { type: 'time'; value: number };

/** Which row of a change a qualified name reads: `before.status`, `after.status`. */
export type RowQualifier = 'before' | 'after';

/** What a predicate reads: a field (by the name the clause gives it, and its row when qualified) or a literal. */
export type Operand = { type: 'field'; name: string; row?: RowQualifier } | Literal;

export type CompareOp = '=' | '<>' | '<' | '<=' | '>' | '>=';

/**
 * A parsed `where` clause. `NOT IN`, `NOT LIKE`, `IS NOT NULL` and `NOT BETWEEN` are `not` around the positive
 * form, and `BETWEEN` is `>=` and `<=`, which SQL's three-valued logic makes equivalent.
 */
export type Condition =
  | { type: 'and' | 'or'; items: Condition[] }
  | { type: 'not'; item: Condition }
  | { type: 'compare'; op: CompareOp; left: Operand; right: Operand }
  | { type: 'isNull'; operand: Operand }
  | { type: 'in'; operand: Operand; values: [Literal, ...Literal[]] }
  | { type: 'like'; operand: Operand; pattern: string };

/** The longest clause read, in characters. */
export const MAX_WHERE_LENGTH = 10_000;
/** The deepest nesting of parentheses and `NOT`s read. */
export const MAX_WHERE_DEPTH = 100;

const COMPARE_OPS: Record<string, CompareOp> = { '=': '=', '<>': '<>', '!=': '<>', '<': '<', '<=': '<=', '>': '>', '>=': '>=' };
/** Words that are never a field name unless quoted. */
const RESERVED = new Set(['AND', 'OR', 'NOT', 'IN', 'LIKE', 'IS', 'NULL', 'BETWEEN']);

/** A recursive-descent parser over the tokens of one clause. */
class Parser {
  private index = 0;
  private depth = 0;

  constructor(private readonly tokens: Token[]) {}

  parse(): Condition {
    const condition = this.or();
    const extra = this.tokens[this.index];
    if (extra !== undefined) throw invalidWhere(`unexpected '${extra.text}' at character ${extra.at + 1}`);
    return condition;
  }

  private or(): Condition {
    const items = [this.and()];
    while (this.keyword('OR')) items.push(this.and());
    return items.length === 1 ? items[0]! : { type: 'or', items };
  }

  private and(): Condition {
    const items = [this.not()];
    while (this.keyword('AND')) items.push(this.not());
    return items.length === 1 ? items[0]! : { type: 'and', items };
  }

  private not(): Condition {
    if (this.keyword('NOT')) return this.nested(() => ({ type: 'not', item: this.not() }));
    if (!this.symbol('(')) return this.predicate();
    const condition = this.nested(() => this.or());
    this.expect(')');
    return condition;
  }

  /** Parses one level deeper, refusing to go past MAX_WHERE_DEPTH (so no input exhausts the stack). */
  private nested(parse: () => Condition): Condition {
    if (++this.depth > MAX_WHERE_DEPTH) throw invalidWhere(`nested deeper than ${MAX_WHERE_DEPTH} levels`);
    const condition = parse();
    this.depth--;
    return condition;
  }

  private predicate(): Condition {
    const operand = this.operand();
    if (this.keyword('IS')) {
      const negated = this.keyword('NOT');
      this.expectKeyword('NULL');
      return negate(negated, { type: 'isNull', operand });
    }
    const negated = this.keyword('NOT');
    if (this.keyword('IN')) return negate(negated, { type: 'in', operand, values: this.list() });
    if (this.keyword('LIKE')) return negate(negated, { type: 'like', operand, pattern: this.pattern() });
    if (this.keyword('BETWEEN')) {
      const low = this.operand();
      this.expectKeyword('AND');
      const high = this.operand();
      const between: Condition = {
        type: 'and',
        items: [
          { type: 'compare', op: '>=', left: operand, right: low },
          { type: 'compare', op: '<=', left: operand, right: high },
        ],
      };
      return negate(negated, between);
    }
    const op = COMPARE_OPS[this.peek()?.type === 'symbol' ? this.peek()!.text : ''];
    if (negated || op === undefined) throw this.unexpected(negated ? 'IN, LIKE or BETWEEN' : 'an operator');
    this.index++;
    return { type: 'compare', op, left: operand, right: this.operand() };
  }

  private operand(): Operand {
    const token = this.next();
    if (token?.type === 'name') return token.qualifier === undefined ? { type: 'field', name: token.text } : qualified(token);
    if (token?.type === 'string') return { type: 'string', value: token.text };
    if (token?.type === 'number') return { type: 'number', value: parseNumber(token.text)! };
    if (token?.type === 'symbol' && (token.text === '-' || token.text === '+') && this.peek()?.type === 'number') {
      const value = parseNumber(token.text + this.next()!.text)!;
      return { type: 'number', value };
    }
    if (token?.type === 'word' && !RESERVED.has(token.text.toUpperCase())) {
      const kind = token.text.toUpperCase();
      if ((kind === 'DATE' || kind === 'TIMESTAMP') && this.peek()?.type === 'string') return this.instant(kind, this.next()!);
      return { type: 'field', name: token.text };
    }
    this.index--;
    throw this.unexpected('a field or a value');
  }

  /** `DATE 'YYYY-MM-DD'` or `TIMESTAMP 'YYYY-MM-DD HH:MI:SS'`, as UTC. */
  private instant(kind: 'DATE' | 'TIMESTAMP', text: Token): Literal {
    const value = kind === 'DATE' && text.text.trim().length !== 10 ? undefined : parseInstant(text.text);
    if (value === undefined) throw invalidWhere(`${kind} '${text.text}' is not a valid ${kind.toLowerCase()}`);
    return { type: 'time', value };
  }

  /** The parenthesised list of `IN`: literals only. */
  private list(): [Literal, ...Literal[]] {
    this.expect('(');
    const values: Literal[] = [];
    do {
      const at = this.index;
      const value = this.operand();
      if (value.type === 'field') {
        this.index = at;
        throw this.unexpected('a value');
      }
      values.push(value);
    } while (this.symbol(','));
    this.expect(')');
    return values as [Literal, ...Literal[]];
  }

  private pattern(): string {
    const token = this.next();
    if (token?.type === 'string') return token.text;
    this.index--;
    throw this.unexpected('a quoted pattern');
  }

  private peek(): Token | undefined {
    return this.tokens[this.index];
  }

  private next(): Token | undefined {
    return this.tokens[this.index++];
  }

  private keyword(word: string): boolean {
    const token = this.peek();
    if (token?.type !== 'word' || token.text.toUpperCase() !== word) return false;
    this.index++;
    return true;
  }

  private symbol(text: string): boolean {
    const token = this.peek();
    if (token?.type !== 'symbol' || token.text !== text) return false;
    this.index++;
    return true;
  }

  private expect(text: string): void {
    if (!this.symbol(text)) throw this.unexpected(`'${text}'`);
  }

  private expectKeyword(word: string): void {
    if (!this.keyword(word)) throw this.unexpected(word);
  }

  private unexpected(wanted: string): Error {
    const token = this.peek();
    const found = token === undefined ? 'the end of the clause' : `'${token.text}' at character ${token.at + 1}`;
    return invalidWhere(`expected ${wanted}, found ${found}`);
  }
}

/** A qualified name: `before.` or `after.` (any case), else a 400 naming it. */
function qualified(token: Token & { type: 'name' }): Operand {
  const row = token.qualifier!.toLowerCase();
  if (row !== 'before' && row !== 'after')
    throw invalidWhere(`'${token.qualifier}.${token.text}' at character ${token.at + 1}: a name is qualified by before. or after. only`);
  return { type: 'field', name: token.text, row };
}

const negate = (negated: boolean, condition: Condition): Condition => (negated ? { type: 'not', item: condition } : condition);

/** Parses a `where` clause into its conditions; anything else (too long, too deep, not SQL) is a 400 saying what. */
export function parseWhere(where: string): Condition {
  if (where.length > MAX_WHERE_LENGTH) throw invalidWhere(`longer than ${MAX_WHERE_LENGTH} characters`);
  if (where.trim() === '') throw invalidWhere('empty');
  return new Parser(tokenize(where)).parse();
}
