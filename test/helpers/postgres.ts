import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, renameSync, rmdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import type { Test } from 'tap';
import { startPostgresServer, type PostgresServer } from '../../src/embedded/postgres-server.js';
import { whenThisProcessEnds } from './parent-watchdog.js';

/** A throwaway PostgreSQL cluster with PostGIS, for one test file. */
/**
 * What a test process that dies without its teardowns still stops: its clusters, through one exit listener (a group
 * runs many test files, and so many clusters, in one process).
 */
const stopAtExit = new Set<() => void>();
process.once('exit', () => {
  for (const stop of stopAtExit) stop();
});

export interface TestPostgres {
  /** `postgres://` URL of its database `geohook`, where `CREATE EXTENSION postgis` has run. */
  readonly url: string;
  readonly port: number;
  /** Its folder (src/embedded/postgres-server.ts: the cluster, password files, socket). */
  readonly dir: string;
  /** The server: stop and start it again (a restart under load). */
  readonly server: PostgresServer;
  /** A pg client connected to {@link TestPostgres.url}, ended at teardown of `t`. */
  connect(t: Test): Promise<pg.Client>;
}

const copy = promisify(execFile);

/**
 * A prepared cluster (`initdb`, the role, the database and PostGIS: most of a first start) that each test file copies
 * instead of making its own, made once per machine and PostgreSQL installation. Made in a folder of its own and
 * renamed into place, so that files starting side by side never see half of one.
 */
async function template(): Promise<string> {
  const uid = process.getuid?.() ?? 'user';
  // Debian's newest major, as startPostgresServer picks it: a new PostgreSQL makes a new template.
  const majors = existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql').filter((entry) => /^\d+$/.test(entry)) : [];
  const major = Math.max(0, ...majors.map(Number));
  const dir = join(tmpdir(), `geohook-pg-template-${uid}-${major}-v1`);
  const ready = (): boolean => existsSync(join(dir, 'data', 'PG_VERSION')) && !existsSync(join(dir, 'data', 'postmaster.pid'));
  if (ready()) return dir;
  const making = mkdtempSync(join(tmpdir(), 'geohook-pg-template-making-'));
  const server = await startPostgresServer({ dir: making, throwaway: true });
  await server.stop('fast');
  rmSync(join(making, 'port'), { force: true });
  rmSync(join(making, 'log'), { force: true });
  // Another file may have made it first; a broken one (a run killed while making it) is replaced.
  if (!ready()) rmSync(dir, { recursive: true, force: true });
  try {
    renameSync(making, dir);
  } catch {
    rmSync(making, { recursive: true, force: true });
  }
  return dir;
}

/**
 * Starts a private PostgreSQL cluster for the test file (src/embedded/postgres-server.ts) in a fresh temporary
 * folder, a copy of the prepared {@link template}, on a free 127.0.0.1 port, with durability off since its data is
 * thrown away. Stopped (immediate shutdown) and deleted at teardown, or when the process exits or is killed.
 */
export async function startPostgres(t: Test): Promise<TestPostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'geohook-pg-'));
  // `cp -a` into the fresh name keeps the `postgres` user's ownership of the cluster when the tests run as root.
  rmdirSync(dir);
  await copy('cp', ['-a', await template(), dir]);
  const clients = new Set<pg.Client>();
  const server = await startPostgresServer({ dir, throwaway: true });
  // A test process that dies without its teardown leaves no cluster running (SIGQUIT: immediate shutdown).
  const killOnExit = (): void => {
    const pid = server.pid();
    if (pid !== undefined) {
      try {
        process.kill(pid, 'SIGQUIT');
      } catch {
        // Already gone.
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };
  stopAtExit.add(killOnExit);
  // Even SIGKILLed, which runs no exit handler: the postmaster of the moment (a test may restart it), then the folder.
  const unwatch = whenThisProcessEnds(
    'pid=$(head -n 1 "$1/data/postmaster.pid" 2>/dev/null) && kill -QUIT "$pid" && while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done; rm -rf "$1"',
    [dir],
  );
  t.teardown(async () => {
    unwatch();
    stopAtExit.delete(killOnExit);
    await Promise.all([...clients].map((client) => client.end().catch(() => {})));
    await server.stop('immediate').catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  });
  const { url, port } = server;
  return {
    url,
    port,
    dir,
    server,
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
