import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import t from 'tap';

// print.ts is the one writer to stdout: names from payloads reach the terminal through it. Each case runs the
// printer in a process of its own and reads what it wrote to its real stdout.

const PRINT = fileURLToPath(new URL('../../src/cli/print.js', import.meta.url));

/** What `print.<helper>(...args)` writes to stdout. */
async function printed(helper: 'printTable' | 'printJson', ...args: unknown[]): Promise<string> {
  const script = `const print = await import(${JSON.stringify(PRINT)}); print.${helper}(...${JSON.stringify(args)});`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  return stdout;
}

/** Any control character but the line feeds that end lines. */
const CONTROL = /(?!\n)\p{Cc}/u;

/** A service name as a forged payload may carry it: set the title (OSC … BEL), clear the screen, colour (CSI as 0x9b), a tab and a line break. */
const HOSTILE = 'E\u001b]0;TITLE-PWNED\u0007\u001b[2J\u009b31mRED\tx\ny\u202eevil';

t.test('a table prints no control character: escape sequences, bells and CSI are dropped, tabs and line breaks are spaces', async (t) => {
  const out = await printed('printTable', [
    { service: `Tools/${HOSTILE}.GPServer`, mode: 'webhook' },
    { service: 'Tools/Buffer.GPServer', mode: { nested: HOSTILE } },
  ]);
  t.notMatch(out, CONTROL);
  t.notOk(out.includes('\u202e'), 'no bidirectional override');
  const lines = out.trimEnd().split('\n');
  t.equal(lines.length, 3, 'one line per row: the layout holds');
  t.match(lines[1], /^Tools\/E\]0;TITLE-PWNED\[2J31mRED x yevil\.GPServer {2}webhook$/);
  t.equal(lines[0]!.indexOf('mode'), lines[1]!.indexOf('webhook'), 'the columns line up');
  t.match(lines[2], /^Tools\/Buffer\.GPServer +\{"nested":"E\\u001b\]0;TITLE-PWNED\\u0007\\u001b\[2J31mRED\\tx\\nyevil"\}$/);
});

t.test('a single object is a two-column table, its field names printable too', async (t) => {
  const out = await printed('printTable', { [`na\u001b[2Jme`]: HOSTILE });
  t.notMatch(out, CONTROL);
  t.match(out.split('\n')[1], /^na\[2Jme +E\]0;TITLE-PWNED/);
});

t.test('JSON output escapes the C1 controls and DEL that JSON.stringify leaves raw, and still parses to the same value', async (t) => {
  const value = { service: HOSTILE, del: 'a\u007fb' };
  const out = await printed('printJson', value);
  t.notMatch(out, CONTROL);
  t.match(out, /\\u009b31mRED/);
  t.same(JSON.parse(out), value);
});
