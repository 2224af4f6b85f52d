import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import t from 'tap';
import { findFreePort } from '../../../src/embedded/redis-server.js';
import { CLI, geohookCommand } from '../../helpers/cli.js';
import { startPostgres } from '../../helpers/postgres.js';
import { waitFor } from '../../helpers/wait.js';

// geohook up with a local PostgreSQL (initdb on first start) on a loaded two-core machine.
t.setTimeout(3 * 60_000);

t.test('geohook up --mirror starts a PostgreSQL under ./.geohook/pg, prints the psql command, and mirrors Parcels into it', async (t) => {
  // PostgreSQL runs as the `postgres` user when root: it must reach its folder inside the test's (the repository's
  // folders may be closed to it).
  const dir = mkdtempSync(join(tmpdir(), 'geohook-up-mirror-'));
  chmodSync(dir, 0o755);
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const [port, emulatorPort] = [await findFreePort(), await findFreePort()];
  const childCommand = geohookCommand(['up', '--mirror'], { PORT: String(port), EMULATOR_PORT: String(emulatorPort) });
  const child = spawn(childCommand.file, childCommand.args, { cwd: dir, env: childCommand.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  t.teardown(async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
    // Whatever happened to geohook, its PostgreSQL does not outlive the test.
    try {
      process.kill(Number(readFileSync(join(dir, '.geohook', 'pg', 'data', 'postmaster.pid'), 'utf8').split('\n')[0]), 'SIGQUIT');
    } catch {
      // Stopped with geohook.
    }
  });
  const look = await waitFor('the psql command', () => /look: +(.*psql.*)\n/.exec(output)?.[1], { timeoutMs: 120_000 });
  // Issue 51: the command names a password file, never a password; the mirror's role is no superuser.
  const [, passwordFile = '', url = ''] = /^PGPASSFILE='([^']+)' psql '([^']+)' /.exec(look) ?? [];
  t.equal(passwordFile, join(dir, '.geohook', 'pg', 'pgpass'));
  t.match(url, /^postgres:\/\/geohook@127\.0\.0\.1:\d+\/geohook$/);
  const password = readFileSync(passwordFile, 'utf8').trim().split(':').at(-1) ?? '';
  const superuserPassword = readFileSync(join(dir, '.geohook', 'pg', 'password'), 'utf8').trim();
  t.notOk(output.includes(password) || output.includes(superuserPassword), 'no password is printed');
  const add = await fetch(`http://127.0.0.1:${emulatorPort}/emulator/services/Hosted/Parcels.FeatureServer/applyEdits`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ edits: [{ id: 0, adds: [{ attributes: { parcel_id: 'P-1', status: 'Open' } }] }] }),
  });
  t.equal(add.status, 200);
  const client = new pg.Client({ connectionString: url.replace('geohook@', `geohook:${encodeURIComponent(password)}@`) });
  await client.connect();
  // PostgreSQL stops with geohook: the connection it ends is no error of the test's.
  client.on('error', () => undefined);
  t.teardown(() => client.end().catch(() => undefined));
  const { rows: roles } = await client.query<{ rolsuper: boolean }>('SELECT rolsuper FROM pg_roles WHERE rolname = current_user');
  t.same(roles, [{ rolsuper: false }]);
  const copy = await client.query("COPY (SELECT 1) TO PROGRAM 'true'").catch((err: unknown) => err);
  t.equal((copy as { code?: string }).code, '42501', 'COPY … TO PROGRAM: permission denied');
  const rows = await waitFor(
    'the parcel in the mirror',
    async () => {
      // The table exists (and is empty) from the initial copy on: wait for the parcel's row.
      const { rows } = await client.query<{ parcel_id: string }>('SELECT parcel_id FROM geohook.parcels_parcels');
      return rows.length > 0 && rows;
    },
    { timeoutMs: 30_000 },
  ).catch((err: unknown) => {
    throw new Error(`${(err as Error).message}\n${output}`);
  });
  t.same(
    rows.map((row) => row.parcel_id),
    ['P-1'],
  );
  // The printed command, pasted into a shell where geohook runs.
  const pasted = await promisify(execFile)('sh', ['-c', look], { cwd: dir, env: { PATH: process.env.PATH ?? '' }, timeout: 30_000 });
  t.match(pasted.stdout, /Hosted\/Parcels\.FeatureServer \| +0 \| parcels_parcels/);
  // Issue 53: geohook mirror status beside it finds its mirror with no variables (the password from its file).
  const status = await promisify(execFile)(process.execPath, [CLI, 'mirror', 'status', '--json'], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '' },
    timeout: 30_000,
  });
  t.match(JSON.parse(status.stdout), { layers: [{ service: 'Hosted/Parcels.FeatureServer', table: 'parcels_parcels', rows: 1 }] });
  child.kill('SIGTERM');
  const [code] = (await once(child, 'exit')) as [number | null];
  t.equal(code, 0, 'Ctrl-C stops everything, PostgreSQL included');
  t.throws(() => readFileSync(join(dir, '.geohook', 'pg', 'data', 'postmaster.pid')), 'PostgreSQL stopped');
});

t.test('geohook up with MIRROR_DATABASE_URL mirrors its own emulator’s Parcels into that PostgreSQL (issue 53)', async (t) => {
  const postgres = await startPostgres(t);
  const dir = mkdtempSync(join(tmpdir(), 'geohook-up-own-pg-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const [port, emulatorPort] = [await findFreePort(), await findFreePort()];
  // A relay route to a port nothing listens on, in a config file of up's own.
  mkdirSync(join(dir, 'conf'));
  const route = { name: 'parcels', url: `http://127.0.0.1:${await findFreePort()}/hook`, types: ['change.*'], format: 'teams' };
  writeFileSync(join(dir, 'conf', 'geohook.json'), JSON.stringify({ relays: [route] }));
  const childCommand = geohookCommand(['up', '--mirror', '--config', 'conf/geohook.json'], {
    PORT: String(port),
    EMULATOR_PORT: String(emulatorPort),
    MIRROR_DATABASE_URL: postgres.url,
  });
  const child = spawn(childCommand.file, childCommand.args, { cwd: dir, env: childCommand.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  t.teardown(async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  });
  await waitFor('ready', () => output.includes('ready:') || child.exitCode !== null, { timeoutMs: 60_000 });
  if (child.exitCode !== null) t.fail(`up stopped:\n${output}`);
  t.match(output, /mirror +Hosted\/Parcels\.FeatureServer into PostgreSQL, schema geohook/);
  t.notOk(existsSync(join(dir, '.geohook', 'pg')), 'no local PostgreSQL is started');
  const add = await fetch(`http://127.0.0.1:${emulatorPort}/emulator/services/Hosted/Parcels.FeatureServer/applyEdits`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ edits: [{ id: 0, adds: [{ attributes: { parcel_id: 'P-7', status: 'Open' } }] }] }),
  });
  t.equal(add.status, 200);
  const client = await postgres.connect(t);
  const rows = await waitFor(
    'the parcel in the user’s PostgreSQL',
    async () => {
      const { rows } = await client
        .query<{ parcel_id: string }>('SELECT parcel_id FROM geohook.parcels_parcels')
        .catch(() => ({ rows: [] as { parcel_id: string }[] }));
      return rows.length > 0 && rows;
    },
    { timeoutMs: 30_000 },
  ).catch((err: unknown) => {
    throw new Error(`${(err as Error).message}\n${output}`);
  });
  t.same(
    rows.map((row) => row.parcel_id),
    ['P-7'],
  );
  // Issue 53: mirror status and relay status beside it find its mirror and its --config with no variables.
  const beside = async (...args: string[]) =>
    promisify(execFile)(process.execPath, [CLI, ...args], { cwd: dir, env: { PATH: process.env.PATH ?? '' }, timeout: 30_000 });
  // Its own database's password is never recorded: it comes from MIRROR_DATABASE_URL, alone.
  const mirrorStatus = await promisify(execFile)(process.execPath, [CLI, 'mirror', 'status', '--json'], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', MIRROR_DATABASE_URL: postgres.url },
    timeout: 30_000,
  });
  t.match(JSON.parse(mirrorStatus.stdout), { layers: [{ service: 'Hosted/Parcels.FeatureServer', table: 'parcels_parcels', rows: 1 }] });
  const password = new URL(postgres.url).password;
  t.notOk(readFileSync(join(dir, '.geohook', 'up.json'), 'utf8').includes(password), 'no password in up.json');
  const noPassword = await beside('mirror', 'status').catch((err: { code: number; stderr: string }) => err);
  t.equal((noPassword as { code?: number }).code, 1);
  t.match(noPassword.stderr, /^geohook: PostgreSQL at 127\.0\.0\.1:\d+ \(MIRROR_DATABASE_URL\) wants a password .*set MIRROR_DATABASE_URL/);
  const relayStatus = await beside('relay', 'status', '--json');
  t.match(JSON.parse(relayStatus.stdout), { routes: [{ name: 'parcels', format: 'teams' }] });
  // Elsewhere, with no routes read, it says so and fails.
  const elsewhere = mkdtempSync(join(tmpdir(), 'geohook-no-up-'));
  t.teardown(() => rmSync(elsewhere, { recursive: true, force: true }));
  const none = await promisify(execFile)(process.execPath, [CLI, 'relay', 'status'], {
    cwd: elsewhere,
    env: { PATH: process.env.PATH ?? '' },
    timeout: 30_000,
  }).catch((err: { code: number; stdout: string; stderr: string }) => err);
  t.equal((none as { code?: number }).code, 1, 'no routes read: exit 1');
  t.equal(none.stdout, '');
  t.match(none.stderr, /^geohook: relay status: no relay routes read: pass --config FILE/);

  // Issue 53: up started again: its emulator keeps no data, and the mirror copies the layer again instead of
  // keeping P-7 as if it were equal to the layer.
  child.kill('SIGTERM');
  await once(child, 'exit');
  let again = '';
  const secondCommand = geohookCommand(['up', '--mirror'], {
    PORT: String(port),
    EMULATOR_PORT: String(emulatorPort),
    MIRROR_DATABASE_URL: postgres.url,
  });
  const second = spawn(secondCommand.file, secondCommand.args, { cwd: dir, env: secondCommand.env, stdio: ['ignore', 'pipe', 'pipe'] });
  second.stdout.on('data', (chunk: Buffer) => (again += chunk.toString()));
  second.stderr.on('data', (chunk: Buffer) => (again += chunk.toString()));
  t.teardown(async () => {
    if (second.exitCode === null) {
      second.kill('SIGTERM');
      await once(second, 'exit');
    }
  });
  await waitFor(
    'the mirror emptied like the new emulator’s layer',
    async () => (await client.query('SELECT parcel_id FROM geohook.parcels_parcels')).rows.length === 0,
    { timeoutMs: 60_000 },
  ).catch((err: unknown) => {
    throw new Error(`${(err as Error).message}\n${again}`);
  });
  t.match(again, /history starts after the tables' generation/);
});

t.test('geohook serve with MIRROR_DATABASE_URL and no ADMIN_URL is refused in one line naming ADMIN_URL', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'geohook-serve-no-admin-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const result = await promisify(execFile)(process.execPath, [CLI, 'serve'], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', MIRROR_DATABASE_URL: 'postgres://geohook@127.0.0.1:1/gis', REDIS_URL: 'redis://127.0.0.1:1' },
    timeout: 30_000,
  }).catch((err: { code: number; stderr: string }) => err);
  t.equal((result as { code?: number }).code, 1);
  t.match(result.stderr, /^geohook: ADMIN_URL: required with MIRROR or MIRROR_DATABASE_URL/);
});
