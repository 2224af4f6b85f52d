import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { repoPath } from '../../helpers/paths.js';

const run = promisify(execFile);

// Three bootstraps, a small tsc build and npx: past tap's 60 s default on a loaded two-core machine.
t.setTimeout(2 * 60_000);

/**
 * The one source of the clone: it stands in for geohook's command line, so that the rebuild the bootstrap runs
 * (`npm run build` with the repository's tsconfig.json and scripts) compiles one small file instead of all of
 * src/. The suite's own build compiles the real sources with the same script.
 */
const STAND_IN_CLI = `#!/usr/bin/env node
const words = process.argv.slice(2).filter((arg) => !arg.startsWith('-'));
process.stdout.write(\`Usage: \${['geohook', ...words].join(' ')} [options]\\n\`);
`;

/**
 * A clone of what `npm start` builds from, in a folder of its own (the suite's dist/ is not rebuilt under the
 * tests that run it): the build settings and scripts, the installed packages, the suite's dist/ marked built,
 * and a src/ older than that mark.
 */
function builtClone(): string {
  const dir = mkdtempSync(join(tmpdir(), 'geohook-bootstrap-'));
  for (const entry of ['package.json', 'package-lock.json', 'tsconfig.json', 'scripts', 'dist'])
    cpSync(repoPath(entry), join(dir, entry), { recursive: true, preserveTimestamps: true });
  mkdirSync(join(dir, 'src'));
  writeFileSync(join(dir, 'src', 'cli.ts'), STAND_IN_CLI);
  const earlier = new Date(Date.now() - 60_000);
  utimesSync(join(dir, 'src', 'cli.ts'), earlier, earlier);
  // Older than the installed packages, whenever the lock file last changed: the bootstrap must not run `npm ci` here,
  // which would empty the repository's node_modules through the link below.
  utimesSync(join(dir, 'package-lock.json'), new Date(0), new Date(0));
  symlinkSync(repoPath('node_modules'), join(dir, 'node_modules'), 'dir');
  writeFileSync(join(dir, 'dist/.built'), '');
  return dir;
}

/** `npm start -- --help`: the bootstrap, then `geohook up --help`. */
async function start(dir: string): Promise<{ stdout: string; stderr: string }> {
  return run('bash', ['scripts/bootstrap.sh', 'start', '--help'], { cwd: dir, env: { ...process.env, REDIS_URL: '' } });
}

t.test('npm start reuses an up-to-date dist/, rebuilds it once a source changed, saying so; npx geohook keeps working', async (t) => {
  const dir = builtClone();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));

  const first = await start(dir);
  t.notMatch(first.stderr, /building/, 'dist/ is up to date: no build');
  t.match(first.stdout, /Usage: geohook up/);

  // A source newer than the last build: rebuilt (dist/ is made anew, its files with it). The mark is moved back rather
  // than the source forward, so that the rebuild's own mark is newer than the source however fast it builds.
  const before = new Date(Date.now() - 120_000);
  utimesSync(join(dir, 'dist/.built'), before, before);
  const rebuilt = await start(dir);
  t.match(rebuilt.stderr, /geohook: building dist\/ \(tsc\)\ngeohook: built in \d+ s\n/, 'the build is announced and timed');
  t.match(rebuilt.stdout, /Usage: geohook up \[options\]/, 'the rebuilt dist/cli.js runs');
  t.equal(statSync(join(dir, 'dist/cli.js')).mode & 0o111, 0o111, 'the bin is executable');
  const npx = await run('npx', ['--yes', 'geohook', '--help'], { cwd: dir });
  t.match(npx.stdout, /Usage: geohook/, 'npx geohook runs after the rebuild (its link kept, the bin executable)');

  t.notMatch((await start(dir)).stderr, /building/, 'built once: the next start reuses it');
});

t.test(
  'issue 53: npx geohook in a terminal prints its first line clean: no npx spinner before it',
  { skip: scriptMissing() },
  async (t) => {
    // `script` gives npx a terminal, where npm draws its spinner (⠙⠹⠸…) while it resolves the command unless the
    // project's .npmrc turns progress off.
    const { stdout } = await run('script', ['-qfc', 'npx geohook --version', '/dev/null'], { cwd: repoPath(), env: process.env });
    t.match(stdout, /^\d+\.\d+\.\d+\r?\n/, 'the version is the first thing printed');
    t.notMatch(stdout, /[\u2800-\u28ff]/, 'no spinner glyph');
  },
);

/** Why the terminal test cannot run: util-linux's `script` is missing. */
function scriptMissing(): string | false {
  try {
    statSync('/usr/bin/script');
    return false;
  } catch {
    return 'util-linux script is not installed at /usr/bin/script';
  }
}
