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
  t.throws(() => parseExactJson('{"a":'), SyntaxError);
  t.equal(Object.getPrototypeOf(parseExactJson('{"__proto__":{"x":1}}')), Object.prototype);
});
