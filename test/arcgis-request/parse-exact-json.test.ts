import t from 'tap';
import { keyedExactParser, parseExactJson } from '../../src/arcgis-request/parse-exact-json.js';

t.test('integers beyond 2^53 stay decimal strings; everything else parses as JSON.parse does', async (t) => {
  t.strictSame(parseExactJson('{"a":9007199254740993,"b":-9223372036854775808,"c":9007199254740991,"d":12.5}'), {
    a: '9007199254740993',
    b: '-9223372036854775808',
    c: 9007199254740991,
    d: 12.5,
  });
  t.strictSame(
    parseExactJson('[1e300, 123456789012345678.5, 0, -1]'),
    [1e300, Number('123456789012345678.5'), 0, -1],
    'floats and exponents are numbers',
  );
  t.strictSame(
    parseExactJson('{"s":"9007199254740993 \\" 9007199254740993"}'),
    { s: '9007199254740993 " 9007199254740993' },
    'digits inside strings are left alone',
  );
  t.strictSame(parseExactJson('{"n":9007199254740992}'), { n: '9007199254740992' }, '2^53 is past the safe integers: a string');
  t.strictSame(
    parseExactJson('{"x":0.12345678901234567,"y":-1.2345678901234567e-8,"id":1234567890123456}'),
    { x: Number('0.12345678901234567'), y: Number('-1.2345678901234567e-8'), id: 1234567890123456 },
    'long fractions and a safe 16-digit integer are numbers',
  );
  t.strictSame(
    parseExactJson('{"x":0.12345678901234567,"big":[1,-9007199254740993]}'),
    { x: Number('0.12345678901234567'), big: [1, '-9007199254740993'] },
    'an unsafe integer beside a long fraction is still found',
  );
  t.strictSame(
    parseExactJson('[0.00012345678901234567,1.5e-9007199254740993,12345678901234567]'),
    [0.00012345678901234567, 0, '12345678901234567'],
    "a fraction's or an exponent's digits are not an integer of their own",
  );
  t.strictSame(parseExactJson('9007199254740993'), '9007199254740993', 'a bare unsafe integer');
  t.strictSame(
    parseExactJson('{"s":"𝔾é\\\\","t":"\\"9007199254740993","n":9007199254740993}'),
    { s: '𝔾é\\', t: '"9007199254740993', n: '9007199254740993' },
    'characters beyond Latin-1 and surrogate pairs keep every offset: the integer after them is quoted in place',
  );
  t.throws(() => parseExactJson('{"a":'), SyntaxError);
  t.equal(Object.getPrototypeOf(parseExactJson('{"__proto__":{"x":1}}')), Object.prototype);
});

t.test("keyed: the named members' integers beyond 2^53 stay decimal strings; the rest parses as JSON.parse does", async (t) => {
  const parse = keyedExactParser(['assessed_value', 'a.b']);
  t.strictSame(
    parse('{"assessed_value":9007199254740993,"other":9007199254740993,"x":[{"assessed_value" : -9223372036854775808}]}'),
    { assessed_value: '9007199254740993', other: 9007199254740992, x: [{ assessed_value: '-9223372036854775808' }] },
    'named members anywhere, spaces around the colon; another member is read as JSON.parse reads it',
  );
  t.strictSame(
    parse('{"assessed_value":9007199254740991,"a.b":1234567890123456,"assessed_value ":9007199254740993}'),
    { assessed_value: 9007199254740991, 'a.b': 1234567890123456, 'assessed_value ': 9007199254740992 },
    'safe integers are numbers; only the exact names count',
  );
  t.strictSame(
    parse('{"assessed_value":12345678901234567.5,"a.b":12345678901234567e2,"axb":9007199254740993}'),
    { assessed_value: Number('12345678901234567.5'), 'a.b': Number('12345678901234567e2'), axb: 9007199254740992 },
    "a fraction or an exponent is a number; a name's dot is a dot",
  );
  t.strictSame(
    parse('{"s":"\\"assessed_value\\":9007199254740993","n":["assessed_value",9007199254740993]}'),
    { s: '"assessed_value":9007199254740993', n: ['assessed_value', 9007199254740992] },
    'the name inside a string, or as a value, is no member',
  );
  t.throws(() => parse('{"assessed_value":9007199254740993'), SyntaxError, 'not JSON');
  t.strictSame(keyedExactParser([])('{"a":9007199254740993}'), { a: 9007199254740992 }, 'no names: JSON.parse');
});

t.test('keyed agrees with the scan on the members it names, whatever surrounds them', async (t) => {
  const names = ['big', 'objectid'];
  const parse = keyedExactParser(names);
  const values = ['9007199254740993', '-18446744073709551615', '42', '9007199254740991', '1.5', '"9007199254740993"', 'null'];
  const noise = ['"s":"\\"big\\":"', '"t":9007199254740993.25', '"u":[1,2.5e300]', '"v":{"w":"big"}'];
  for (let seed = 0; seed < 200; seed += 1) {
    const members = [
      noise[seed % noise.length]!,
      `"big":${values[seed % values.length]!}`,
      `"objectid":${values[(seed * 3) % values.length]!}`,
    ];
    const text = `{${(seed % 2 === 0 ? members : members.reverse()).join(',')}}`;
    const keyed = parse(text) as Record<string, unknown>;
    const scanned = parseExactJson(text) as Record<string, unknown>;
    for (const name of names) t.strictSame(keyed[name], scanned[name], text);
  }
});
