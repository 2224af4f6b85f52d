import t from 'tap';
import { parseExactJson } from '../../src/arcgis-request/parse-exact-json.js';

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
