import t from 'tap';
import { utf8Text } from '../../src/arcgis-request/utf8-text.js';

const decoder = new TextDecoder();

t.test('utf8Text reads bytes as TextDecoder does, ASCII or not', async (t) => {
  const texts = ['{"features":[{"attributes":{"objectid":1,"name":"Main St"}}]}', '{"name":"Zürich ✓ 😀"}', '', '\u007f'];
  for (const text of texts) t.equal(utf8Text(new TextEncoder().encode(text)), text, JSON.stringify(text));
  const odd = [Uint8Array.of(0xef, 0xbb, 0xbf, 0x7b, 0x7d), Uint8Array.of(0x7b, 0xff, 0xc3, 0x7d)];
  for (const bytes of odd) t.equal(utf8Text(bytes), decoder.decode(bytes), 'a byte order mark, and bytes that are not UTF-8');
});

t.test('utf8Text reads only the bytes of a view, not the rest of its buffer', async (t) => {
  const whole = Buffer.from('[{"a":1},{"b":2}]');
  t.equal(utf8Text(whole.subarray(1, 8)), '{"a":1}');
  t.equal(utf8Text(new Uint8Array(whole.buffer, whole.byteOffset + 9, 7)), '{"b":2}');
  const mixed = Buffer.from('ab é cd');
  t.equal(utf8Text(mixed.subarray(3, 5)), 'é');
});
