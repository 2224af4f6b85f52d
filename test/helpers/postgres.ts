import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { Test } from 'tap';
import { startPostgresServer, type PostgresServer } from '../../src/embedded/postgres-server.js';

/** A throwaway PostgreSQL cluster with PostGIS, for one test file. */
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

/**
 * Starts a private PostgreSQL cluster for the test file (src/embedded/postgres-server.ts) in a fresh temporary
 * folder, on a free 127.0.0.1 port, with durability off since its data is thrown away. Stopped (immediate
 * shutdown) and deleted at teardown, or when the process exits.
 */
export async function startPostgres(t: Test): Promise<TestPostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'geohook-pg-'));
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
  process.once('exit', killOnExit);
  t.teardown(async () => {
    process.off('exit', killOnExit);
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
