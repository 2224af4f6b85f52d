import fc from 'fast-check';
import t, { type Test } from 'tap';
import { AdminError } from '../../../src/emulator/admin-error.js';
import { objectIdRangeOf } from '../../../src/emulator/features/object-id-range.js';
import type { AttributeValue, FieldDefinition, FieldType } from '../../../src/emulator/features/types.js';
import { compileWhere } from '../../../src/emulator/features/where.js';

const field = (name: string, type: FieldType): FieldDefinition => ({
  name,
  type,
  alias: name,
  nullable: true,
  editable: true,
  domain: null,
  defaultValue: null,
});

const FIELDS: FieldDefinition[] = [
  field('OBJECTID', 'esriFieldTypeOID'),
  field('GlobalID', 'esriFieldTypeGlobalID'),
  field('name', 'esriFieldTypeString'),
  field('other', 'esriFieldTypeString'),
  field('count', 'esriFieldTypeInteger'),
  field('ratio', 'esriFieldTypeDouble'),
  field('big', 'esriFieldTypeBigInteger'),
  field('seen', 'esriFieldTypeDate'),
  field('day', 'esriFieldTypeDateOnly'),
  field('ref', 'esriFieldTypeGUID'),
];

type Row = Record<string, AttributeValue>;

/** Whether `row` matches `where` over FIELDS. */
const matches = (where: string, row: Row): boolean => compileWhere(where, FIELDS)(row);

/** The rows of `rows` (named by their `name`) that `where` matches. */
const names = (where: string, rows: readonly Row[]): (string | null)[] =>
  rows.filter(compileWhere(where, FIELDS)).map((row) => row.name as string | null);

/** Asserts that compiling `where` is the real server's 400 for a bad where, with a last detail matching `reason`. */
function rejects(t: Test, where: string, reason: RegExp): void {
  let error: unknown;
  try {
    compileWhere(where, FIELDS);
  } catch (caught) {
    error = caught;
  }
  if (!(error instanceof AdminError)) {
    t.fail(`${JSON.stringify(where.slice(0, 60))} should throw an AdminError, got ${String(error)}`);
    return;
  }
  t.equal(error.code, 400, where.slice(0, 60));
  t.same(error.messages.slice(0, 2), ['Unable to complete operation.', "'where' parameter is invalid"]);
  t.match(error.messages[2], reason);
}

const NUMBERS: Row[] = [-2, 0, 1, 5, 10].map((count) => ({ name: `n${count}`, count }));

t.test('1=1 matches every row and 1=0 none, whatever the row holds', async (t) => {
  for (const row of [{}, { count: null }, { name: 'x', count: 3 }]) {
    t.equal(matches('1=1', row), true);
    t.equal(matches(' 1 = 1 ', row), true);
    t.equal(matches('1=0', row), false);
    t.equal(matches("'a' = 'a'", row), true);
    t.equal(matches('2 > 1', row), true);
  }
});

t.test('each comparison operator compares numbers', async (t) => {
  t.same(names('count = 1', NUMBERS), ['n1']);
  t.same(names('count <> 1', NUMBERS), ['n-2', 'n0', 'n5', 'n10']);
  t.same(names('count != 1', NUMBERS), ['n-2', 'n0', 'n5', 'n10'], '!= is <>');
  t.same(names('count < 1', NUMBERS), ['n-2', 'n0']);
  t.same(names('count <= 1', NUMBERS), ['n-2', 'n0', 'n1']);
  t.same(names('count > 1', NUMBERS), ['n5', 'n10']);
  t.same(names('count >= 1', NUMBERS), ['n1', 'n5', 'n10']);
  t.same(names('1 < count', NUMBERS), ['n5', 'n10'], 'the field on the right');
  t.same(names('count > -2', NUMBERS), ['n0', 'n1', 'n5', 'n10'], 'a negative literal');
  t.same(names('count = +5', NUMBERS), ['n5'], 'a signed positive literal');
  t.same(names('count >= 0.5', NUMBERS), ['n1', 'n5', 'n10'], 'a decimal literal');
  t.same(names('count = 1e1', NUMBERS), ['n10'], 'an exponent');
  t.same(names("count = '5'", NUMBERS), ['n5'], 'a quoted number, as PostgreSQL casts it');
});

t.test('a field compares with another field', async (t) => {
  const rows: Row[] = [
    { name: 'a', count: 1, ratio: 1 },
    { name: 'b', count: 2, ratio: 1.5 },
    { name: 'c', count: 2, ratio: null },
  ];
  t.same(names('count = ratio', rows), ['a']);
  t.same(names('count > ratio', rows), ['b']);
  t.same(
    names('name = other', [
      { name: 'x', other: 'x' },
      { name: 'y', other: 'Y' },
    ]),
    ['x'],
  );
});

t.test('AND binds tighter than OR, NOT tighter than both, and parentheses override them', async (t) => {
  const rows: Row[] = [
    { name: 'a', count: 1, ratio: 0 },
    { name: 'b', count: 2, ratio: 1 },
    { name: 'c', count: 3, ratio: 1 },
  ];
  t.same(names('count = 1 OR count = 2 AND ratio = 0', rows), ['a']);
  t.same(names('(count = 1 OR count = 2) AND ratio = 1', rows), ['b']);
  t.same(names('NOT count = 1 AND ratio = 1', rows), ['b', 'c']);
  t.same(names('NOT (count = 1 OR ratio = 1)', rows), []);
  t.same(names('NOT NOT count = 1', rows), ['a']);
  t.same(names('count = 1 OR count = 2 OR count = 3', rows), ['a', 'b', 'c']);
  t.same(names('count >= 1 AND count <= 3 AND ratio = 1', rows), ['b', 'c']);
  t.same(names('((count = 3))', rows), ['c']);
});

t.test('keywords and field names are case-insensitive; a quoted name is a field', async (t) => {
  const row = { name: 'x', count: 1 };
  t.equal(matches("COUNT = 1 and NAME = 'x'", row), true);
  t.equal(matches("Count in (1) Or name Like 'y'", row), true);
  t.equal(matches('count IS not NULL', row), true);
  t.equal(matches('"count" = 1', row), true);
  t.equal(matches('"Count" = 2', row), false);
});

t.test('strings: quotes doubled, compared case-sensitively and in code-unit order', async (t) => {
  t.equal(matches("name = 'O''Brien'", { name: "O'Brien" }), true);
  t.equal(matches("name = ''''", { name: "'" }), true);
  t.equal(matches("name = 'abc'", { name: 'ABC' }), false);
  t.equal(matches("name = 'abc'", { name: 'abc' }), true);
  t.equal(matches("name < 'b'", { name: 'abc' }), true);
  t.equal(matches("name > 'B'", { name: 'abc' }), true, 'lower case sorts after upper case');
  t.equal(matches("name = 'a b'", { name: 'a b' }), true);
  t.equal(matches("name = ''", { name: '' }), true, 'an empty string is not null');
});

t.test('IN and NOT IN', async (t) => {
  t.same(names('count IN (1, 5, 7)', NUMBERS), ['n1', 'n5']);
  t.same(names('count NOT IN (1, 5, 7)', NUMBERS), ['n-2', 'n0', 'n10']);
  t.same(names('count IN (-2)', NUMBERS), ['n-2']);
  t.same(names("count IN ('0', 10.0)", NUMBERS), ['n0', 'n10'], 'quoted numbers and decimals find integers');
  t.same(names("name IN ('n1', 'N5', 'n10')", NUMBERS), ['n1', 'n10'], 'case-sensitive');
  t.equal(matches('1 IN (2, 1)', {}), true, 'a constant');
  t.equal(matches("'x' NOT IN ('x')", {}), false);
});

t.test('LIKE: % any run, _ one character, NOT LIKE, case-sensitive', async (t) => {
  const rows: Row[] = ['apple', 'Apple', 'ape', 'grape', 'a', ''].map((name) => ({ name }));
  t.same(names("name LIKE 'ap%'", rows), ['apple', 'ape']);
  t.same(names("name LIKE '%pe'", rows), ['ape', 'grape']);
  t.same(names("name LIKE '%p%'", rows), ['apple', 'Apple', 'ape', 'grape']);
  t.same(names("name LIKE 'a_e'", rows), ['ape']);
  t.same(names("name LIKE '_'", rows), ['a']);
  t.same(names("name LIKE '%'", rows), ['apple', 'Apple', 'ape', 'grape', 'a', '']);
  t.same(names("name LIKE 'a'", rows), ['a'], 'no wildcard: equality');
  t.same(names("name NOT LIKE '%p%'", rows), ['a', '']);
  t.same(names("name LIKE '%%e'", rows), ['apple', 'Apple', 'ape', 'grape'], 'consecutive %');
  t.same(names("name LIKE 'a%p%e'", rows), ['apple', 'ape']);
  t.equal(matches("name LIKE 'x_y'", { name: 'x😀y' }), true, '_ is one character, even outside the BMP');
  t.equal(matches("name LIKE '_😀_'", { name: 'a😀b' }), true);
  t.equal(matches("'abc' LIKE 'a%'", {}), true, 'a constant');
});

t.test('LIKE reads regular-expression characters as themselves', async (t) => {
  t.equal(matches("name LIKE 'a.c'", { name: 'abc' }), false);
  t.equal(matches("name LIKE 'a.c'", { name: 'a.c' }), true);
  t.equal(matches("name LIKE 'a*'", { name: 'aaa' }), false);
  t.equal(matches("name LIKE 'a*'", { name: 'a*' }), true);
  t.equal(matches("name LIKE '(x|y)+[z]?$^\\%'", { name: '(x|y)+[z]?$^\\ and more' }), true);
  t.equal(matches("name LIKE '(x|y)+'", { name: 'x' }), false);
  t.equal(matches("name LIKE '[a-z]%'", { name: 'b' }), false);
  t.equal(matches("name LIKE '\\d%'", { name: '1' }), false);
  t.equal(matches("name LIKE '\\d%'", { name: '\\d1' }), true);
  t.equal(matches("name LIKE 'a\nb'", { name: 'a\nb' }), true, 'a newline is a character like another');
  t.equal(matches("name LIKE 'a_b'", { name: 'a\nb' }), true, '_ matches a newline');
});

t.test('LIKE takes time in proportion to the value and the pattern, whatever the pattern', async (t) => {
  // A backtracking regular expression would try about 20,000^30 ways to fail the first: it would not finish before tap's limit.
  const value = 'a'.repeat(20_000);
  t.equal(matches(`name LIKE '${'%a'.repeat(30)}%b'`, { name: value }), false);
  t.equal(matches(`name LIKE '${'%a'.repeat(30)}%'`, { name: value }), true);
});

t.test('LIKE agrees with a regular expression on random values and patterns', async () => {
  const reference = (pattern: string): RegExp =>
    new RegExp(
      `^${Array.from(pattern, (char) => (char === '%' ? '.*' : char === '_' ? '.' : char.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('')}$`,
      'su',
    );
  const text = (chars: string[]) => fc.array(fc.constantFrom(...chars), { maxLength: 8 }).map((list) => list.join(''));
  fc.assert(
    fc.property(text(['a', 'b', '.', '😀']), text(['a', 'b', '.', '%', '_', '😀']), (value, pattern) => {
      const where = `name LIKE '${pattern}'`;
      return matches(where, { name: value }) === reference(pattern).test(value);
    }),
    { numRuns: 2_000 },
  );
});

t.test('IS NULL and IS NOT NULL: a missing attribute is null', async (t) => {
  const rows: Row[] = [{ name: 'set', count: 0 }, { name: 'null', count: null }, { name: 'missing' }, { name: 'empty', other: '' }];
  t.same(names('count IS NULL', rows), ['null', 'missing', 'empty']);
  t.same(names('count IS NOT NULL', rows), ['set']);
  t.same(names('other IS NULL', rows), ['set', 'null', 'missing'], 'an empty string is not null');
  t.equal(matches('1 IS NULL', {}), false);
  t.equal(matches('1 IS NOT NULL', {}), true);
});

t.test('a comparison with null is unknown: neither it nor its negation matches', async (t) => {
  const row = { name: null, count: null };
  for (const where of [
    'count = 1',
    'count <> 1',
    'count < 1',
    'count >= 1',
    'NOT (count = 1)',
    'NOT count <> 1',
    'count IN (1, 2)',
    'count NOT IN (1, 2)',
    "name LIKE '%'",
    "name NOT LIKE 'x'",
    'count BETWEEN 0 AND 2',
    'count NOT BETWEEN 0 AND 2',
    'count = count',
    'NOT NOT count = 1',
    'count = 1 AND 1 = 1',
    'NOT (count = 1 OR 1 = 0)',
  ]) {
    t.equal(matches(where, row), false, where);
  }
  t.equal(matches('count = 1 OR 1 = 1', row), true, 'unknown OR true is true');
  t.equal(matches('NOT (count = 1 AND 1 = 0)', row), true, 'unknown AND false is false, so its negation is true');
  t.equal(matches('NOT (count = 1 OR 1 = 1)', row), false, 'unknown OR true is true, its negation false');
  t.equal(matches('count = 1', { count: 1 }), true, 'the same clauses match values');
});

t.test('BETWEEN and NOT BETWEEN include both ends', async (t) => {
  t.same(names('count BETWEEN 0 AND 5', NUMBERS), ['n0', 'n1', 'n5']);
  t.same(names('count NOT BETWEEN 0 AND 5', NUMBERS), ['n-2', 'n10']);
  t.same(names('count BETWEEN 5 AND 0', NUMBERS), [], 'an empty range');
  t.same(names('count BETWEEN 0 AND 5 AND count <> 1', NUMBERS), ['n0', 'n5'], 'the AND of BETWEEN is its own');
  t.same(names("name BETWEEN 'n1' AND 'n5'", NUMBERS), ['n1', 'n5', 'n10'], 'text ranges too');
});

t.test('integers past 2^53 compare exactly with BigInteger fields', async (t) => {
  const exact = { big: 9007199254740993n };
  const below = { big: 9007199254740992n };
  t.equal(matches('big = 9007199254740993', exact), true);
  t.equal(matches('big = 9007199254740993', below), false);
  t.equal(matches('big <> 9007199254740993', below), true);
  t.equal(matches('big > 9007199254740992', exact), true);
  t.equal(matches('big < 9007199254740993', below), true);
  t.equal(matches('big >= 9007199254740993', below), false);
  t.equal(matches("big = '9007199254740993'", exact), true, 'a quoted integer is exact too');
  t.equal(matches('big IN (1, 9007199254740993)', exact), true);
  t.equal(matches('big IN (1, 9007199254740993)', below), false);
  t.equal(matches('big = -9223372036854775808', { big: -9223372036854775808n }), true, 'the smallest 64-bit integer');
  t.equal(matches('big = 12', { big: 12n }), true, 'small integers find bigints');
  t.equal(matches('big IN (12)', { big: 12n }), true);
  t.equal(matches('big < 12.5', { big: 12n }), true, 'a decimal against a bigint');
  t.equal(matches('big = 12.5', { big: 12n }), false);
  t.equal(matches('9007199254740993 = 9007199254740992', {}), false, 'two literals');
  t.equal(matches('ratio = 9007199254740993', { ratio: 9007199254740992 }), false, 'the double 2^53 is not 2^53 + 1');
  t.equal(matches('ratio IN (9007199254740993)', { ratio: 9007199254740992 }), false);
  t.equal(matches('ratio IN (9007199254740992)', { ratio: 9007199254740992 }), true);
  t.equal(matches('big = ratio', { big: 9007199254740992n, ratio: 9007199254740992 }), true, 'a bigint and a double of the same value');
});

t.test('dates: DATE and TIMESTAMP literals are UTC, compared with Date fields in epoch milliseconds', async (t) => {
  const midnight = Date.UTC(2024, 0, 15);
  const rows: Row[] = [
    { name: 'before', seen: midnight - 1 },
    { name: 'midnight', seen: midnight },
    { name: 'noon', seen: midnight + 12 * 3_600_000 },
  ];
  t.same(names("seen = DATE '2024-01-15'", rows), ['midnight']);
  t.same(names("seen >= DATE '2024-01-15'", rows), ['midnight', 'noon']);
  t.same(names("seen < timestamp '2024-01-15 12:00:00'", rows), ['before', 'midnight']);
  t.same(names("seen = TIMESTAMP '2024-01-15 12:00:00'", rows), ['noon']);
  t.same(names("seen > TIMESTAMP '2024-01-14 23:59:59.999'", rows), ['midnight', 'noon'], 'milliseconds');
  t.same(names("seen BETWEEN '2024-01-15' AND '2024-01-15 11:00'", rows), ['midnight'], 'quoted dates, as PostgreSQL casts them');
  t.same(names("seen IN (TIMESTAMP '2024-01-15 00:00:00', DATE '2024-01-14')", rows), ['midnight']);
  t.equal(matches("DATE '2024-01-15' < TIMESTAMP '2024-01-15 00:00:01'", {}), true);
  t.equal(matches("seen > DATE '1969-12-31'", { seen: -1 }), true, 'before the epoch');
});

t.test('dates: DateOnly fields compare with dates and timestamps at their midnight (UTC)', async (t) => {
  const rows: Row[] = [
    { name: 'feb28', day: '2024-02-28' },
    { name: 'feb29', day: '2024-02-29' },
    { name: 'mar1', day: '2024-03-01' },
  ];
  t.same(names("day = DATE '2024-02-29'", rows), ['feb29']);
  t.same(names("day > DATE '2024-02-29'", rows), ['mar1']);
  t.same(names("day = '2024-02-29'", rows), ['feb29']);
  t.same(names("day < TIMESTAMP '2024-02-29 00:00:01'", rows), ['feb28', 'feb29']);
  t.same(names("day IN (DATE '2024-03-01', '2024-02-28')", rows), ['feb28', 'mar1']);
  t.equal(matches("day < DATE '2025-01-01'", { day: null }), false, 'null');
  t.equal(matches("NOT day < DATE '2025-01-01'", { day: 'not a date' }), false, 'a malformed stored value is unknown');
  t.same(names('day < seen', [{ name: 'x', day: '2024-02-29', seen: Date.UTC(2024, 1, 29, 0, 0, 1) }]), ['x'], 'with a Date field');
});

t.test('GUIDs compare in any case, with or without braces', async (t) => {
  const id = '{5F2E6C1A-3B4D-4E8F-9A0B-1C2D3E4F5A6B}';
  const row = { GlobalID: id, ref: id, name: id.toLowerCase() };
  t.equal(matches(`GlobalID = '${id}'`, row), true);
  t.equal(matches(`globalid = '${id.toLowerCase()}'`, row), true);
  t.equal(matches(`GlobalID = '${id.slice(1, -1).toLowerCase()}'`, row), true);
  t.equal(matches("GlobalID = '{5F2E6C1A-0000-4E8F-9A0B-1C2D3E4F5A6B}'", row), false);
  t.equal(matches(`ref IN ('${id.slice(1, -1)}', 'other')`, row), true);
  t.equal(matches('ref = GlobalID', row), true);
  t.equal(matches('ref = name', row), true, 'a text field compared with a GUID field as a GUID');
  t.equal(matches(`GlobalID LIKE '{5F2E%'`, row), true);
  t.equal(matches('ref = name', { ref: id, name: null }), false, 'null');
  t.equal(matches('NOT ref = name', { ref: id, name: null }), false);
});

t.test('field names resolve to the layer’s spelling', async (t) => {
  const fields = [field('MixedCase', 'esriFieldTypeInteger')];
  t.equal(compileWhere('mixedcase = 1', fields)({ MixedCase: 1 }), true);
  t.equal(compileWhere('mixedcase = 1', fields)({ mixedcase: 1 }), false, 'the attributes are keyed by the field’s own name');
});

t.test('an unknown field is a 400 naming it', async (t) => {
  rejects(t, 'nope = 1', /unknown field 'nope'/);
  rejects(t, 'count = 1 AND Missing IS NULL', /unknown field 'Missing'/);
  rejects(t, 'count = nope', /unknown field 'nope'/);
  rejects(t, '"na me" = 1', /unknown field 'na me'/);
  rejects(t, "date = 'x'", /unknown field 'date'/);
});

t.test('syntax errors are 400s saying what was expected', async (t) => {
  rejects(t, '(count = 1', /expected '\)', found the end of the clause/);
  rejects(t, '((count = 1) OR (count = 2)', /expected '\)'/);
  rejects(t, 'count = 1)', /unexpected '\)' at character 10/);
  rejects(t, 'count = 1 count', /unexpected 'count' at character 11/);
  rejects(t, 'count = 1 2', /unexpected '2'/);
  rejects(t, '1=1; DROP TABLE x', /unexpected character ';' at character 4/);
  rejects(t, 'count', /expected an operator, found the end of the clause/);
  rejects(t, 'count ==  1', /expected a field or a value, found '='/);
  rejects(t, 'count = ', /expected a field or a value, found the end/);
  rejects(t, 'count AND 1=1', /expected an operator, found 'AND'/);
  rejects(t, 'count NOT = 1', /expected IN, LIKE or BETWEEN/);
  rejects(t, 'count IS 1', /expected NULL/);
  rejects(t, 'count IN 1', /expected '\('/);
  rejects(t, 'count IN ()', /expected a field or a value, found '\)'/);
  rejects(t, 'count IN (1,)', /expected a field or a value/);
  rejects(t, 'count IN (1, other)', /expected a value, found 'other'/);
  rejects(t, 'name LIKE other', /expected a quoted pattern, found 'other'/);
  rejects(t, 'count BETWEEN 1 OR 2', /expected AND, found 'OR'/);
  rejects(t, "name = 'unterminated", /unterminated string at character 8/);
  rejects(t, '"name = 1', /unterminated quoted name/);
  rejects(t, 'count = - x', /expected a field or a value, found '-'/);
  rejects(t, 'AND = 1', /expected a field or a value, found 'AND'/);
  rejects(t, 'count = NULL', /found 'NULL'/);
  rejects(t, "UPPER(name) = 'X'", /expected an operator, found '\('/);
  rejects(t, 'count + 1 = 2', /expected an operator, found '\+'/);
  rejects(t, 'seen > CURRENT_TIMESTAMP', /unknown field 'CURRENT_TIMESTAMP'/);
  rejects(t, "name LIKE 'a!%' ESCAPE '!'", /unexpected 'ESCAPE'/);
  rejects(t, '', /empty/);
  rejects(t, '   ', /empty/);
});

t.test('values that do not compare are 400s naming the field', async (t) => {
  rejects(t, 'name = 5', /cannot compare field 'name' \(esriFieldTypeString\) with 5/);
  rejects(t, 'seen = 5', /cannot compare field 'seen' \(esriFieldTypeDate\) with 5/);
  rejects(t, "count = DATE '2024-01-01'", /cannot compare field 'count' \(esriFieldTypeInteger\) with a date/);
  rejects(t, 'count = name', /cannot compare field 'count'.* with field 'name'/);
  rejects(t, "count = 'five'", /'five' is not a number/);
  rejects(t, "count IN (1, 'two')", /'two' is not a number/);
  rejects(t, "name IN ('a', 2)", /cannot compare field 'name' .* with 2/);
  rejects(t, "seen > 'yesterday'", /'yesterday' is not a date/);
  rejects(t, "DATE '2024-02-30' = seen", /DATE '2024-02-30' is not a valid date/);
  rejects(t, "seen = DATE '2024-01-01 10:00:00'", /is not a valid date/);
  rejects(t, "seen = TIMESTAMP '2024-01-01 25:00:00'", /is not a valid timestamp/);
  rejects(t, "count LIKE '1%'", /LIKE needs text, not field 'count'/);
  rejects(t, "seen LIKE '2024%'", /LIKE needs text, not field 'seen'/);
});

t.test('a clause longer than 10,000 characters is a 400', async (t) => {
  const clause = (terms: number) => Array.from({ length: terms }, () => 'count = 1').join(' OR ');
  t.ok(clause(700).length <= 10_000);
  t.equal(matches(clause(700), { count: 1 }), true, 'a long flat clause is fine, and evaluating it does not recurse per term');
  rejects(t, clause(1_000), /longer than 10000 characters/);
  rejects(t, `name = '${'x'.repeat(10_000)}'`, /longer than 10000 characters/);
});

t.test('nesting past 100 levels is a 400, never a stack overflow', async (t) => {
  const parens = (depth: number) => `${'('.repeat(depth)}count = 1${')'.repeat(depth)}`;
  t.equal(matches(parens(100), { count: 1 }), true, '100 levels are read');
  rejects(t, parens(101), /nested deeper than 100 levels/);
  rejects(t, parens(4_900), /nested deeper than 100 levels/);
  t.equal(matches(`${'NOT '.repeat(100)}count = 1`, { count: 1 }), true);
  rejects(t, `${'NOT '.repeat(101)}count = 1`, /nested deeper than 100 levels/);
  rejects(t, `${'NOT ('.repeat(60)}count = 1${')'.repeat(60)}`, /nested deeper than 100 levels/);
  rejects(t, '('.repeat(9_999), /nested deeper than 100 levels/);
});

t.test('a compiled clause runs over 100,000 rows', async (t) => {
  const rows: Row[] = Array.from({ length: 100_000 }, (_, i) => ({ OBJECTID: i + 1, name: `n${i % 10}`, count: i % 7 }));
  const test = compileWhere("count IN (1, 3) AND name LIKE 'n1%' AND NOT OBJECTID < 10", FIELDS);
  const hits = rows.filter(test).length;
  const expected = rows.filter((row) => [1, 3].includes(row.count as number) && row.name === 'n1' && (row.OBJECTID as number) >= 10).length;
  t.equal(hits, expected);
});

t.test('the object id range of a clause holds every row it matches, and is tight for ANDed bounds', async (t) => {
  const id = fc.integer({ min: 0, max: 40 });
  const op = fc.constantFrom('=', '<>', '<', '<=', '>', '>=');
  const bound = fc.oneof(
    fc.tuple(op, id).map(([o, n]) => `OBJECTID ${o} ${n}`),
    fc.tuple(id, op).map(([n, o]) => `${n} ${o} objectid`),
    fc.tuple(op, fc.double({ min: 0, max: 40, noNaN: true })).map(([o, n]) => `OBJECTID ${o} ${n}`),
    fc.tuple(id, id).map(([a, b]) => `OBJECTID BETWEEN ${a} AND ${b}`),
    fc.constantFrom("name = 'a'", 'count > 10', 'OBJECTID IS NULL', 'OBJECTID IN (3, 30)'),
  );
  const clause: fc.Arbitrary<string> = fc.letrec<{ clause: string }>((tie) => ({
    clause: fc.oneof(
      { depthSize: 'small' },
      bound,
      fc.tuple(tie('clause'), tie('clause')).map(([a, b]) => `(${a}) AND (${b})`),
      fc.tuple(tie('clause'), tie('clause')).map(([a, b]) => `(${a}) OR (${b})`),
      tie('clause').map((a) => `NOT (${a})`),
    ),
  })).clause;
  fc.assert(
    fc.property(clause, (where) => {
      const test = compileWhere(where, FIELDS);
      const { min, max } = objectIdRangeOf(where, 'OBJECTID');
      for (let objectId = 0; objectId <= 41; objectId += 1) {
        if (test({ OBJECTID: objectId, name: 'a', count: 20 }) && (objectId < min || objectId > max)) return false;
      }
      return true;
    }),
    { numRuns: 2_000 },
  );
  t.same(objectIdRangeOf('objectid > 2000 AND objectid <= 4000', 'OBJECTID'), { min: 2001, max: 4000 });
  t.same(objectIdRangeOf('OBJECTID > 2.5 AND 7 > OBJECTID AND count > 1', 'OBJECTID'), { min: 3, max: 6 });
  t.same(objectIdRangeOf('OBJECTID > 5 OR OBJECTID < 2', 'OBJECTID'), { min: -Infinity, max: Infinity });
  t.same(objectIdRangeOf('NOT OBJECTID > 5', 'OBJECTID'), { min: -Infinity, max: Infinity });
});
