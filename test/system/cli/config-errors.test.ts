import { join } from 'node:path';
import t from 'tap';
import { runCli } from '../../helpers/cli.js';

// The CLI runs in the test's directory, so that the file is named as given.
t.setTimeout(60_000);

t.test('issue 53: a mistake in GEOHOOK_CONFIG stops the CLI with one line pointing at it, and no stack', async (t) => {
  const cases: [string, string][] = [
    ['{\n  "relays": [],\n}\n', 'geohook: GEOHOOK_CONFIG (geohook.json): line 3, column 1: unexpected "}" — a trailing comma?\n'],
    ['{"relay": []}', 'geohook: GEOHOOK_CONFIG (geohook.json) at "relay": unknown key; did you mean "relays"?\n'],
    [
      '{"subscriptions": [{"name": "permits", "type": "gp.*"}]}',
      'geohook: GEOHOOK_CONFIG (geohook.json) at "subscriptions[0].type": "types" must be a list (you wrote "type")\n',
    ],
  ];
  const dir = t.testdir(Object.fromEntries(cases.map(([content], index) => [`case${index}`, { 'geohook.json': content }])));
  const results = await Promise.all(
    cases.map((_, index) => runCli(['subscriptions', 'list', '--config', 'geohook.json'], { cwd: join(dir, `case${index}`) })),
  );
  results.forEach((result, index) => {
    t.equal(result.code, 1, 'exits 1');
    t.equal(result.stderr, cases[index]![1]);
  });
});

t.test('issue 53: several mistakes stop geohook serve with one line each, every line prefixed', async (t) => {
  const cwd = t.testdir({ 'geohook.json': JSON.stringify({ relay: [], hooks: [{ name: 'gis', secret: 'k1' }] }) });
  const result = await runCli(['serve'], { cwd, env: { GEOHOOK_CONFIG: 'geohook.json' } });
  t.equal(result.code, 1);
  t.equal(
    result.stderr,
    'geohook: GEOHOOK_CONFIG (geohook.json) at "relay": unknown key; did you mean "relays"?\n' +
      'geohook: GEOHOOK_CONFIG (geohook.json) at "hooks[0].secret": "secrets" must be a list (you wrote "secret")\n',
  );
});
