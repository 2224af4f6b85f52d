import { execFile } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { MIRROR_ROLE, mirrorRolePassword, newPassword, writeHostAuth, writePrivateFile, type ClusterOwner } from './postgres-access.js';
import { prepareGeohookDatabase } from './postgres-database.js';
import { findFreePort } from './redis-server.js';

const run = promisify(execFile);

const MISSING =
  'PostgreSQL was not found: install it with PostGIS (Debian/Ubuntu: sudo apt-get install -y postgresql postgresql-15-postgis-3; macOS: brew install postgresql postgis)';

/** Options of {@link startPostgresServer}. */
export interface PostgresServerOptions {
  /**
   * Its folder: `data` (the cluster), `password` (the superuser's), `pgpass` (see {@link PostgresServer.passwordFile}),
   * `log` and its socket. Created when missing; kept across starts.
   */
  dir: string;
  /** Port to listen on (127.0.0.1 only). @defaultValue a free port, the one of the last start when there was one */
  port?: number;
  /** Durability off (`fsync`, `synchronous_commit`, `full_page_writes`): for data that is thrown away. @defaultValue false */
  throwaway?: boolean;
}

/** A local PostgreSQL with PostGIS, run as the `postgres` user when root (PostgreSQL refuses to run as root). */
export interface PostgresServer {
  /**
   * `postgres://` URL of its database `geohook`, where PostGIS is installed, as the role `geohook` that owns it (no
   * superuser), with its password.
   */
  readonly url: string;
  /** A libpq password file (`PGPASSFILE`, mode 0600) with the password of {@link PostgresServer.url}'s role, for `psql`. */
  readonly passwordFile: string;
  readonly port: number;
  /** The postmaster's process id. */
  pid(): number | undefined;
  /** Stops it: `fast` (clients are disconnected, a checkpoint is written) or `immediate` (as a crash). @defaultValue 'fast' */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Starts it again on the same folder and port. */
  start(): Promise<void>;
}

/** The folder of `initdb` and `pg_ctl`: Debian's newest /usr/lib/postgresql/<major>/bin, else whatever PATH finds. */
function binDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const majors = readdirSync(root)
    .filter((entry) => /^\d+$/.test(entry) && existsSync(join(root, entry, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return majors[0] === undefined ? undefined : join(root, majors[0], 'bin');
}

/** Runs a PostgreSQL program as the `postgres` user when root, directly otherwise. */
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
async function postgresUser(): Promise<NonNullable<ClusterOwner>> {
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

/** `initdb` of a new cluster whose superuser `postgres` signs in with `password` (SCRAM). */
async function initCluster(dir: string, dataDir: string, password: string, owner: ClusterOwner): Promise<void> {
  const passwordFile = join(dir, 'initdb-password');
  writePrivateFile(passwordFile, `${password}\n`, owner);
  try {
    const auth = ['--auth=scram-sha-256', `--pwfile=${passwordFile}`];
    await runAsOwner('initdb', ['--no-sync', '-U', 'postgres', '-E', 'UTF8', '--no-locale', ...auth, '-D', dataDir], dir);
  } finally {
    rmSync(passwordFile, { force: true });
  }
}

/**
 * Starts a local PostgreSQL in `dir` (`initdb` the first time, into `dir/data`, owned by the `postgres` user when
 * root), listening on 127.0.0.1 only, its socket in `dir`, every connection signing in with a password (SCRAM); the
 * superuser's random password is kept in `dir/password`, the role `geohook`'s in `dir/pgpass` (both mode 0600). The
 * superuser only makes the role, the database `geohook` it owns, and PostGIS there (postgres-database.ts).
 */
export async function startPostgresServer(options: PostgresServerOptions): Promise<PostgresServer> {
  const { dir } = options;
  const dataDir = join(dir, 'data');
  const owner = process.getuid?.() === 0 ? await postgresUser() : undefined;
  mkdirSync(dir, { recursive: true });
  if (owner !== undefined) chownSync(dir, owner.uid, owner.gid);
  chmodSync(dir, 0o700);
  const passwordPath = join(dir, 'password');
  const passwordFile = join(dir, 'pgpass');
  const portPath = join(dir, 'port');
  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    writePrivateFile(passwordPath, newPassword());
    await initCluster(dir, dataDir, readFileSync(passwordPath, 'utf8'), owner);
  }
  // Also over a cluster of an earlier geohook, which trusted its socket.
  writeHostAuth(dataDir, owner);
  const password = readFileSync(passwordPath, 'utf8').trim();
  const rolePassword = mirrorRolePassword(passwordFile);
  let port = options.port ?? (existsSync(portPath) ? Number(readFileSync(portPath, 'utf8')) : await findFreePort());

  let started = false;
  // A first start may move to another free port; a start again keeps the one the URL names.
  const start = async (): Promise<void> => {
    for (let attempt = 1; ; attempt += 1) {
      const settings = [`-c listen_addresses=127.0.0.1 -p ${port} -c unix_socket_directories=${dir} -c max_connections=50`];
      if (options.throwaway === true) settings.push('-c fsync=off -c synchronous_commit=off -c full_page_writes=off');
      try {
        await runAsOwner('pg_ctl', ['-D', dataDir, '-l', join(dir, 'log'), '-w', '-t', '30', '-s', '-o', settings.join(' '), 'start'], dir);
        writeFileSync(portPath, String(port));
        started = true;
        return;
      } catch (err) {
        const log = existsSync(join(dir, 'log')) ? readFileSync(join(dir, 'log'), 'utf8') : '';
        if (attempt < 3 && !started && options.port === undefined && /could not bind|address already in use/i.test(log)) {
          port = await findFreePort();
          continue;
        }
        throw new Error(`PostgreSQL did not start:\n${log.slice(-2000)}`, { cause: err });
      }
    }
  };
  await start();
  await prepareGeohookDatabase(`postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}`, rolePassword);
  return {
    url: `postgres://${MIRROR_ROLE}:${encodeURIComponent(rolePassword)}@127.0.0.1:${port}/geohook`,
    passwordFile,
    port,
    pid: () => postmasterPid(dataDir),
    async stop(mode = 'fast') {
      if (postmasterPid(dataDir) !== undefined) await runAsOwner('pg_ctl', ['-D', dataDir, '-m', mode, '-s', '-w', 'stop'], dir);
    },
    start,
  };
}
