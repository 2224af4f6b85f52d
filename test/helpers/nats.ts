import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { findFreePort } from '../../src/embedded/redis-server.js';
import { brokerProcess, portOpen, type BrokerProcess } from './broker-process.js';

/** A private `nats-server -js` for one test file. */
export interface TestNats extends BrokerProcess {
  /** `nats://127.0.0.1:<port>`. */
  readonly url: string;
  readonly port: number;
}

/**
 * Starts a NATS server with JetStream on a free 127.0.0.1 port, its store in a fresh temporary folder (never the
 * machine's shared server on 4222); stopped and its folder deleted at teardown. `stop()`/`kill()` then `start()`
 * restart it on the same port and store.
 */
export async function startNats(t: Test): Promise<TestNats> {
  const dir = mkdtempSync(join(tmpdir(), 'geohook-nats-'));
  const port = await findFreePort();
  const server = brokerProcess({
    name: 'nats-server',
    command: 'nats-server',
    args: ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', dir, '-n', `geohook-test-${port}`],
    env: { ...process.env, PATH: `${process.env.PATH ?? ''}:/usr/sbin:/usr/local/sbin` },
    ready: () => portOpen(port),
    startMs: 20_000,
  });
  await server.start();
  t.teardown(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return { ...server, url: `nats://127.0.0.1:${port}`, port };
}
