import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import type { Test } from 'tap';
import { findFreePort } from '../../src/embedded/redis-server.js';

const run = promisify(execFile);

/** A throwaway PostgreSQL cluster with PostGIS, for one test file. */
export interface TestPostgres {
  /** `postgres://` URL of its database `geohook`, where `CREATE EXTENSION postgis` has run. */
  readonly url: string;
  readonly port: number;
  /** A pg client connected to {@link TestPostgres.url}, ended at teardown of `t`. */
  connect(t: Test): Promise<pg.Client>;
}

const MISSING =
  'PostgreSQL was not found: npm test installs it when run as root; otherwise install it (Debian/Ubuntu: sudo apt-get install -y postgresql postgresql-15-postgis-3; macOS: brew install postgresql postgis)';

/** The folder of `initdb` and `pg_ctl`: Debian's newest /usr/lib/postgresql/<major>/bin, else whatever PATH finds. */
function binDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const majors = readdirSync(root)
    .filter((entry) => /^\d+$/.test(entry) && existsSync(join(root, entry, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return majors[0] === undefined ? undefined : join(root, majors[0], 'bin');
}

/** Runs a PostgreSQL program as the `postgres` user when root (PostgreSQL refuses to run as root), directly otherwise. */
async function runAsOwner(program: string, args: string[], cwd: string): Promise<void> {
  const dir = binDir();
  const binary = dir === undefined ? program : join(dir, program);
  const [file, argv] = process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', binary, ...args]] : [binary, args];
  try {
    await run(file, argv, { cwd, timeout: 60_000 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || /No such file|not found/i.test(String((err as { stderr?: string }).stderr))) {
      throw new Error(MISSING, { cause: err });
    }
    throw err;
  }
}

/** The `postgres` user's ids (Debian's packages create it). */
async function postgresUser(): Promise<{ uid: number; gid: number }> {
  const id = async (flag: string): Promise<number> => Number((await run('id', [flag, 'postgres'])).stdout.trim());
  try {
    return { uid: await id('-u'), gid: await id('-g') };
  } catch (err) {
    throw new Error(`no 'postgres' user to run PostgreSQL as (root may not). ${MISSING}`, { cause: err });
  }
}

/** The postmaster's process id, from `postmaster.pid` (first line). */
const postmasterPid = (dataDir: string): number | undefined => {
  try {
    return Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return undefined;
  }
};

/**
 * Starts a private PostgreSQL cluster for the test file: `initdb` into a fresh temporary folder (owned by the
 * `postgres` user when running as root), `pg_ctl start` listening on a free 127.0.0.1 port only (its socket in
 * that folder), with durability off (`fsync`, `synchronous_commit`, `full_page_writes`) since its data is thrown
 * away. The superuser `postgres` connects over TCP with a random password (SCRAM). Creates the database
 * `geohook` with PostGIS. Stopped (immediate shutdown) and deleted at teardown, or when the process exits.
 */
export async function startPostgres(t: Test): Promise<TestPostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'geohook-pg-'));
  const dataDir = join(dir, 'data');
  const owner = process.getuid?.() === 0 ? await postgresUser() : undefined;
  const password = randomBytes(18).toString('base64url');
  const passwordFile = join(dir, 'password');
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  for (const path of [dir, passwordFile]) if (owner !== undefined) chownSync(path, owner.uid, owner.gid);
  chmodSync(dir, 0o700);
  await runAsOwner(
    'initdb',
    [
      '--no-sync',
      '-U',
      'postgres',
      '-E',
      'UTF8',
      '--no-locale',
      '--auth-local=trust',
      '--auth-host=scram-sha-256',
      `--pwfile=${passwordFile}`,
      '-D',
      dataDir,
    ],
    dir,
  );
  rmSync(passwordFile);

  let port: number;
  let stopped = false;
  const clients = new Set<pg.Client>();
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    process.off('exit', killOnExit);
    await Promise.all([...clients].map((client) => client.end().catch(() => {})));
    if (postmasterPid(dataDir) !== undefined)
      await runAsOwner('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-s', 'stop'], dir).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  };
  // A test process that dies without its teardown leaves no cluster running (SIGQUIT: immediate shutdown).
  const killOnExit = (): void => {
    const pid = postmasterPid(dataDir);
    if (pid !== undefined) {
      try {
        process.kill(pid, 'SIGQUIT');
      } catch {
        // Already gone.
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', killOnExit);
  t.teardown(stop);

  for (let attempt = 1; ; attempt += 1) {
    port = await findFreePort();
    const options = [
      `-c listen_addresses=127.0.0.1 -p ${port} -c unix_socket_directories=${dir}`,
      '-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=50',
    ].join(' ');
    try {
      await runAsOwner('pg_ctl', ['-D', dataDir, '-l', join(dir, 'log'), '-w', '-t', '30', '-s', '-o', options, 'start'], dir);
      break;
    } catch (err) {
      const log = existsSync(join(dir, 'log')) ? readFileSync(join(dir, 'log'), 'utf8') : '';
      if (attempt < 3 && /could not bind|address already in use/i.test(log)) continue;
      throw new Error(`PostgreSQL did not start:\n${log}`, { cause: err });
    }
  }

  const base = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}`;
  const admin = new pg.Client({ connectionString: `${base}/postgres` });
  await admin.connect();
  try {
    await admin.query('CREATE DATABASE geohook');
  } finally {
    await admin.end();
  }
  const url = `${base}/geohook`;
  const setup = new pg.Client({ connectionString: url });
  await setup.connect();
  try {
    await setup.query('CREATE EXTENSION postgis');
  } finally {
    await setup.end();
  }

  return {
    url,
    port,
    async connect(test: Test) {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      clients.add(client);
      test.teardown(async () => {
        if (clients.delete(client)) await client.end();
      });
      return client;
    },
  };
}
