import t from 'tap';
import { jsonNestingExceeds, MAX_NESTING } from '../../src/arcgis/payload.js';
import { MAX_FORM_FIELDS } from '../../src/receiver/payload-limits.js';
import { sign } from '../../src/signature/sign.js';
import { countJobs, startReceiver, TEST_KEY } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';

const redis = await startRedis(t);
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const nested = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const form = (fields: number): string => Array.from({ length: fields }, (_, i) => `f${i}=1`).join('&');

t.test('nesting is measured on the text, before any parse: brackets inside strings do not count', async (t) => {
  t.equal(jsonNestingExceeds(nested(MAX_NESTING), MAX_NESTING), false);
  t.equal(jsonNestingExceeds(nested(MAX_NESTING + 1), MAX_NESTING), true);
  t.equal(jsonNestingExceeds(Buffer.from(nested(MAX_NESTING + 1)), MAX_NESTING), true, 'bytes as text');
  t.equal(jsonNestingExceeds('{"a":[{"b":{"c":1}}]}', 4), false, 'four levels');
  t.equal(jsonNestingExceeds('{"a":[{"b":{"c":1}}]}', 3), true);
  t.equal(jsonNestingExceeds(`{"a":"${'['.repeat(100)}"}`, 1), false, 'brackets in a string');
  t.equal(jsonNestingExceeds(String.raw`{"a":"\\","b":[[]]}`, 2), true, 'a string ends after an escaped backslash');
  t.equal(jsonNestingExceeds(String.raw`{"a":"\"[[]]"}`, 1), false, 'an escaped quote keeps the string open');
  // For every JSON value the scan agrees with the parsed value's nesting.
  for (const [json, depth] of [
    ['1', 0],
    ['[]', 1],
    ['[{"a":[1,{"b":"]]]"}]}]', 4],
    ['"[[["', 0],
  ] as const) {
    t.equal(jsonNestingExceeds(json, depth), false, `${json}: ${depth} levels`);
    if (depth > 0) t.equal(jsonNestingExceeds(json, depth - 1), true, `${json}: more than ${depth - 1}`);
  }
});

t.test('a signed body nested deeper than the limit is refused 400, not stored, and not retried as a 503', async (t) => {
  const receiver = await startReceiver(t, redis);
  for (const depth of [MAX_NESTING + 1, 10_000, 100_000]) {
    const body = nested(depth);
    const response = await receiver.post(body, { 'x-service': sign(TEST_KEY, body) });
    t.equal(response.status, 400, `depth ${depth}`);
    t.match(await response.json(), {
      code: 'GEOHOOK_ERR_BAD_PAYLOAD',
      message: `the body nests arrays or objects deeper than ${MAX_NESTING} levels`,
    });
  }
  const unsigned = await receiver.post(nested(100_000));
  t.equal(unsigned.status, 401, 'an unsigned one is refused for its signature first');
  const within = nested(MAX_NESTING);
  t.equal((await receiver.post(within, { 'x-service': sign(TEST_KEY, within) })).status, 202, 'the limit itself is accepted');
  t.equal(await countJobs(receiver.app), 1);
});

t.test(`a form of more than ${MAX_FORM_FIELDS} fields is refused 400 before its fields are decoded`, async (t) => {
  const receiver = await startReceiver(t, redis);
  for (const fields of [MAX_FORM_FIELDS + 1, 100_000]) {
    const body = form(fields);
    const response = await receiver.post(body, { ...FORM, 'x-service': sign(TEST_KEY, body) });
    t.equal(response.status, 400, `${fields} fields`);
    t.match(await response.json(), { code: 'GEOHOOK_ERR_BAD_PAYLOAD', message: new RegExp(`more than ${MAX_FORM_FIELDS} form fields`) });
  }
  const forged = form(100_000);
  t.equal(
    (await receiver.post(forged, { ...FORM, 'x-service': sign('other-key', forged) })).status,
    401,
    'a forged one is refused for its signature',
  );
  const within = form(MAX_FORM_FIELDS);
  t.equal((await receiver.post(within, { ...FORM, 'x-service': sign(TEST_KEY, within) })).status, 202, 'the limit itself is accepted');
  t.equal(await countJobs(receiver.app), 1);
});
