import { InvalidWhereError, invalidWhere } from './where-error.js';
import { compileLike } from './where-like.js';
import { parseWhere, type CompareOp, type Condition, type Literal, type Operand, type RowQualifier } from './where-parser.js';
import { canonicalNumber, fieldDomain, normalizeGuid, parseInstant, parseNumber, type Comparable, type Domain } from './where-values.js';

/** A field a clause may name: its name and ArcGIS type. */
export interface WhereField {
  name: string;
  type: string;
}

/** A row's attributes: BigInteger values as `bigint` or as decimal strings, dates as epoch milliseconds. */
type Row = Readonly<Record<string, unknown>>;
/** A condition's value for a row in SQL's three-valued logic: null is unknown. */
type Truth = (row: Row) => boolean | null;
type Getter = (row: Row) => Comparable | null;

/** An operand resolved against the layer: a field (its definition, and how to read its value) or a literal. */
type Resolved = { type: 'field'; field: WhereField; value: (row: Row) => unknown } | Literal;

const describe = (operand: Resolved): string =>
  operand.type === 'field'
    ? `field '${operand.field.name}' (${operand.field.type})`
    : operand.type === 'time'
      ? 'a date'
      : `${operand.value}`;

/** The domain an operand asks for; a string literal asks for none (it takes the other side's). */
function domainOf(operand: Resolved): Domain | undefined {
  if (operand.type === 'field') return fieldDomain(operand.field.type);
  return operand.type === 'string' ? undefined : operand.type === 'number' ? 'number' : 'time';
}

/** The domain two operands are compared in; a 400 when there is none (text with a number, a date with a number). */
function commonDomain(left: Resolved, right: Resolved, current = domainOf(left)): Domain {
  const other = domainOf(right);
  if (current === undefined || other === undefined || current === other) return current ?? other ?? 'text';
  if ((current === 'guid' && other === 'text') || (current === 'text' && other === 'guid')) return 'guid';
  throw invalidWhere(`cannot compare ${describe(left)} with ${describe(right)}`);
}

/** A literal in `domain`: a string literal is read as a number, a GUID or a date there, as PostgreSQL reads it. */
function literalIn(literal: Literal, domain: Domain): Comparable {
  if (literal.type !== 'string' || domain === 'text') return literal.value;
  if (domain === 'guid') return normalizeGuid(literal.value);
  const value = domain === 'number' ? parseNumber(literal.value) : parseInstant(literal.value);
  if (value === undefined) throw invalidWhere(`'${literal.value}' is not a ${domain === 'number' ? 'number' : 'date'}`);
  return value;
}

/** Reads an operand in `domain`: a DateOnly as its midnight (UTC), a string field compared with a GUID as a GUID. */
function getterIn(operand: Resolved, domain: Domain): Getter {
  if (operand.type !== 'field') {
    const value = literalIn(operand, domain);
    return () => value;
  }
  const { field, value } = operand;
  const text = (row: Row): string | null => {
    const found = value(row);
    return typeof found === 'string' ? found : null;
  };
  if (field.type === 'esriFieldTypeDateOnly')
    return (row) => {
      const found = text(row);
      return found === null ? null : (parseInstant(found) ?? null);
    };
  if (domain === 'guid')
    return (row) => {
      const found = text(row);
      return found === null ? null : normalizeGuid(found);
    };
  // A BigInteger may come as its decimal string (a change event's row), to be compared as the number it is.
  if (domain === 'number') return (row) => numberOf(value(row));
  return (row) => comparable(value(row));
}

/** A value as it compares: strings, numbers and bigints as they are, anything else unknown (null). */
const comparable = (value: unknown): Comparable | null =>
  typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint' ? value : null;

/** A number field's value: a decimal string read exactly. */
const numberOf = (value: unknown): Comparable | null => (typeof value === 'string' ? (parseNumber(value) ?? null) : comparable(value));

/** The comparisons, on two non-null values of one domain: `<` and `>` compare a `bigint` with a `number` exactly, where `===` would not. */
const TESTS: Record<CompareOp, (a: Comparable, b: Comparable) => boolean> = {
  '=': (a, b) => !(a < b || a > b),
  '<>': (a, b) => a < b || a > b,
  '<': (a, b) => a < b,
  '<=': (a, b) => !(a > b),
  '>': (a, b) => a > b,
  '>=': (a, b) => !(a < b),
};

/** A constant condition when no operand reads the row (`1=1`), evaluated once. */
function folded(truth: Truth, operands: readonly Resolved[]): Truth {
  if (operands.some((operand) => operand.type === 'field')) return truth;
  const value = truth({});
  return () => value;
}

function compileCompare(op: CompareOp, left: Resolved, right: Resolved): Truth {
  const domain = commonDomain(left, right);
  const [getLeft, getRight, test] = [getterIn(left, domain), getterIn(right, domain), TESTS[op]];
  return folded(
    (row) => {
      const a = getLeft(row);
      if (a === null) return null;
      const b = getRight(row);
      return b === null ? null : test(a, b);
    },
    [left, right],
  );
}

function compileIn(operand: Resolved, values: readonly [Literal, ...Literal[]]): Truth {
  const domain = values.slice(1).reduce((current, value) => commonDomain(operand, value, current), commonDomain(operand, values[0]));
  const key = domain === 'number' ? (value: Comparable) => canonicalNumber(value as number | bigint) : (value: Comparable) => value;
  const set = new Set(values.map((value) => key(literalIn(value, domain))));
  const get = getterIn(operand, domain);
  return folded(
    (row) => {
      const value = get(row);
      return value === null ? null : set.has(key(value));
    },
    [operand],
  );
}

function compileLikeCondition(operand: Resolved, pattern: string): Truth {
  const domain = domainOf(operand);
  if (domain === 'number' || domain === 'time') throw invalidWhere(`LIKE needs text, not ${describe(operand)}`);
  const test = compileLike(pattern);
  if (operand.type !== 'field') return () => test(operand.value as string);
  const read = operand.value;
  return (row) => {
    const value = read(row);
    return typeof value === 'string' ? test(value) : null;
  };
}

/** Every item must hold for `and` (any one for `or`); otherwise unknown if any item is. */
function compileJunction(type: 'and' | 'or', items: readonly Truth[]): Truth {
  const decisive = type === 'or';
  return (row) => {
    let unknown = false;
    for (const item of items) {
      const value = item(row);
      if (value === decisive) return decisive;
      if (value === null) unknown = true;
    }
    return unknown ? null : !decisive;
  };
}

function compileCondition(condition: Condition, resolve: (operand: Operand) => Resolved): Truth {
  switch (condition.type) {
    case 'and':
    case 'or':
      return compileJunction(
        condition.type,
        condition.items.map((item) => compileCondition(item, resolve)),
      );
    case 'not': {
      const item = compileCondition(condition.item, resolve);
      return (row) => {
        const value = item(row);
        return value === null ? null : !value;
      };
    }
    case 'compare':
      return compileCompare(condition.op, resolve(condition.left), resolve(condition.right));
    case 'in':
      return compileIn(resolve(condition.operand), condition.values);
    case 'like':
      return compileLikeCondition(resolve(condition.operand), condition.pattern);
    case 'isNull': {
      const operand = resolve(condition.operand);
      if (operand.type !== 'field') return () => false;
      const read = operand.value;
      return (row) => read(row) === null || read(row) === undefined;
    }
  }
}

/** A field's value in the row a plain clause reads. */
const plainValue =
  (name: string) =>
  (row: Row): unknown =>
    row[name];

/** A name the layer lacks: the error, with the name for callers that pass over such layers. */
const unknownField = (operand: Operand & { type: 'field' }): InvalidWhereError =>
  new InvalidWhereError(`unknown field '${operand.row === undefined ? '' : `${operand.row}.`}${operand.name}'`, operand.name);

/**
 * Compiles a `where` clause of ArcGIS's standardized SQL into a test of a feature's attributes, once, so that
 * running it over many rows costs only the closures it built.
 *
 * It reads comparisons (`=`, `<>`, `<`, `<=`, `>`, `>=`), `AND`, `OR`, `NOT` and parentheses, `[NOT] IN (…)`,
 * `[NOT] LIKE` (`%`, `_`), `IS [NOT] NULL` and `[NOT] BETWEEN … AND …`; strings in single quotes (`''` a quote),
 * numbers (integers exactly, as `bigint` past 2^53), `DATE 'YYYY-MM-DD'` and `TIMESTAMP 'YYYY-MM-DD HH:MI:SS'`
 * (UTC). Keywords and field names are case-insensitive; text is compared case-sensitively, GUIDs with or without
 * braces in any case. A comparison with null is unknown, and a row matches only when the clause is true.
 * Not read (a 400): arithmetic, functions (`UPPER`, `CURRENT_TIMESTAMP`, `CAST`…), `ESCAPE`,
 * and `NULL` anywhere but `IS [NOT] NULL`.
 *
 * @param fields - the layer's fields, which name the fields the clause may read and give their types
 * @throws InvalidWhereError (`GEOHOOK_ERR_INVALID_WHERE`) for an unknown field, a syntax error, an empty clause,
 *   values that do not compare (text with a number), or a clause over 10,000 characters or nested over 100 levels
 */
export function compileWhere(where: string, fields: readonly WhereField[]): (attributes: Row) => boolean {
  const byName = new Map(fields.map((field) => [field.name.toLowerCase(), field]));
  const resolve = (operand: Operand): Resolved => {
    if (operand.type !== 'field') return operand;
    if (operand.row !== undefined)
      throw invalidWhere(`'${operand.row}.${operand.name}': before. and after. are read by the filters of change events only`);
    const field = byName.get(operand.name.toLowerCase());
    if (field === undefined) throw unknownField(operand);
    return { type: 'field', field, value: plainValue(field.name) };
  };
  const truth = compileCondition(parseWhere(where), resolve);
  return (attributes) => truth(attributes) === true;
}

/** The rows a transition clause reads: `row` for bare names, `before` and `after` for qualified ones (undefined: none). */
export interface TransitionRows {
  row: Row | undefined;
  before: Row | undefined;
  after: Row | undefined;
}

/** A compiled transition clause, and the fields (the layer's spelling) it reads of each row. */
export interface TransitionWhere {
  test(rows: TransitionRows): boolean;
  reads: Readonly<Record<'row' | RowQualifier, readonly string[]>>;
}

/**
 * Compiles a clause of a change-event filter, where a name may be qualified: `before.status` reads the row before the
 * change, `after.status` the row after it, a bare `status` the row the caller gives (docs/changes.md#transitions).
 * A row that is undefined reads as nulls. Same SQL and errors as {@link compileWhere}.
 */
export function compileTransitionWhere(where: string, fields: readonly WhereField[]): TransitionWhere {
  const byName = new Map(fields.map((field) => [field.name.toLowerCase(), field]));
  const reads = { row: new Set<string>(), before: new Set<string>(), after: new Set<string>() };
  const resolve = (operand: Operand): Resolved => {
    if (operand.type !== 'field') return operand;
    const field = byName.get(operand.name.toLowerCase());
    if (field === undefined) throw unknownField(operand);
    const at = operand.row ?? 'row';
    reads[at].add(field.name);
    const { name } = field;
    return { type: 'field', field, value: (rows) => (rows[at] as Row | undefined)?.[name] };
  };
  const truth = compileCondition(parseWhere(where), resolve);
  return {
    test: (rows) => truth(rows as unknown as Row) === true,
    reads: { row: [...reads.row], before: [...reads.before], after: [...reads.after] },
  };
}
