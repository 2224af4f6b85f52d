import { join } from 'node:path';
import t, { type Test } from 'tap';
import { loadConfig } from '../../src/config/load-config.js';
import { nearestKey } from '../../src/config/nearest-key.js';
import { ConfigError } from '../../src/errors.js';

/** The lines of the ConfigError loading a GEOHOOK_CONFIG file of `content` throws, each with the file named as `F`. */
function refusal(t: Test, content: string | object): string[] {
  const path = join(t.testdir({ 'geohook.json': typeof content === 'string' ? content : JSON.stringify(content) }), 'geohook.json');
  try {
    loadConfig({ GEOHOOK_CONFIG: path });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.message.split('\n').map((line) => line.replace(`GEOHOOK_CONFIG (${path})`, 'F'));
  }
  throw new Error('the file was accepted');
}

t.test('issue 53: a trailing comma is named by line and column, not by a character count', async (t) => {
  const file = '{\n  "hooks": [\n    { "name": "gis", "secrets": ["s3cret"] },\n  ],\n  "relays": []\n}\n';
  t.strictSame(refusal(t, file), ['F: line 4, column 3: unexpected "]" — a trailing comma?']);
  t.strictSame(refusal(t, '{\n  "relays": [],\n}'), ['F: line 3, column 1: unexpected "}" — a trailing comma?']);
});

t.test('issue 53: other JSON slips say what was expected, and quote one character of the file at most', async (t) => {
  t.strictSame(refusal(t, '{"hooks": [] "relays": []}'), ['F: line 1, column 14: unexpected "\\"" — a missing comma?']);
  t.strictSame(refusal(t, '{"hooks": }'), ['F: line 1, column 11: unexpected "}"; expected a value']);
  t.strictSame(refusal(t, '// relays\n{}'), ['F: line 1, column 1: unexpected "/" — JSON has no comments']);
  t.strictSame(refusal(t, "{'hooks': []}"), ['F: line 1, column 2: unexpected "\'" — JSON strings take double quotes']);
  t.strictSame(refusal(t, '{\n  "hooks": [\n'), ['F: line 3, column 1: the file ends early — a missing "}" or "]"?']);
  t.strictSame(refusal(t, '{"hooks": [{"name": "gis", "secrets": [s3cret]}]}'), ['F: line 1, column 40: unexpected "s"; expected a value']);
});

t.test('issue 53: an unknown key names the known key nearest to it', async (t) => {
  t.strictSame(refusal(t, { relay: [] }), ['F at "relay": unknown key; did you mean "relays"?']);
  t.strictSame(refusal(t, { dedupRetention: 60 }), ['F at "dedupRetention": unknown key; did you mean "dedupRetentionSeconds"?']);
});

t.test('issue 53: unknown keys are explained at every level of the file', async (t) => {
  const route = { name: 'parcels', url: 'https://example.com/hook', types: ['change.*'], format: 'teams' };
  const cases: [object, string][] = [
    [{ hooks: [{ name: 'gis', secret: ['k1'] }] }, 'F at "hooks[0].secret": unknown key; did you mean "secrets"?'],
    [{ relays: [{ ...route, timeout: 5000 }] }, 'F at "relays[0].timeout": unknown key; did you mean "timeoutMs"?'],
    [{ relays: [{ ...route, retry: { attemps: 2 } }] }, 'F at "relays[0].retry.attemps": unknown key; did you mean "attempts"?'],
    [
      { subscriptions: [{ name: 'a', types: ['gp.*'], where: "x = 'a'", chnged: ['x'] }] },
      'F at "subscriptions[0].chnged": unknown key; did you mean "changed"?',
    ],
    [{ dashboard: { tokn: 'a-token-of-some-length' } }, 'F at "dashboard.tokn": unknown key; did you mean "token"?'],
    [{ timeouts: { headerMs: 1000 } }, 'F at "timeouts.headerMs": unknown key; did you mean "headersMs"?'],
    [{ redis: { options: { pasword: 'p' } } }, 'F at "redis.options.pasword": unknown key; did you mean "password"?'],
    [
      { changes: { 'Hosted/Parcels.FeatureServer': { field: ['x'] } } },
      'F at "changes[\'Hosted/Parcels.FeatureServer\'].field": unknown key; the keys here are "track", "layers", "where", "within", "when", "emit", "snapshot", "attachments", "submissionWindowMs"',
    ],
  ];
  for (const [content, line] of cases) t.strictSame(refusal(t, content), [line], line);
});

t.test('issue 53: a list key written in the singular with one value says that the plural is a list', async (t) => {
  t.strictSame(refusal(t, { subscriptions: [{ name: 'permits', type: 'gp.*' }] }), [
    'F at "subscriptions[0].type": "types" must be a list (you wrote "type")',
  ]);
  const route = { name: 'parcels', url: 'https://example.com/hook', types: ['change.*'], format: 'teams' };
  t.strictSame(refusal(t, { relays: [{ ...route, service: 'Hosted/Parcels.FeatureServer' }] }), [
    'F at "relays[0].service": "services" must be a list (you wrote "service")',
  ]);
  t.strictSame(refusal(t, { hooks: [{ name: 'gis', secret: 'k1' }] }), [
    'F at "hooks[0].secret": "secrets" must be a list (you wrote "secret")',
  ]);
});

t.test('issue 53: every problem is one line, listed once, in the order of the file', async (t) => {
  const lines = refusal(t, {
    subscriptions: [{ name: 'permits' }],
    dedupRetention: 60,
    hooks: [{ nam: 'gis' }],
    maxConnections: 'many',
  });
  t.strictSame(lines, [
    'F at "subscriptions[0].types": required: a list',
    'F at "dedupRetention": unknown key; did you mean "dedupRetentionSeconds"?',
    'F at "hooks[0].nam": unknown key; did you mean "name"?',
    'F at "maxConnections": a number, not a string',
  ]);
  const many = refusal(t, Object.fromEntries(Array.from({ length: 30 }, (_, index) => [`unknown${index}`, index])));
  t.equal(many.length, 11, 'ten problems, then a count');
  t.equal(many[10], 'F: and 20 more problems');
});

t.test('nearestKey leaves a key with no near one alone', async (t) => {
  t.equal(nearestKey('xyzzy', ['relays', 'hooks']), undefined);
  t.equal(nearestKey('Relays', ['relays', 'hooks']), 'relays');
});
