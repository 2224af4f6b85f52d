import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { reservePort } from '../reserved-ports.js';
import { brokerProcess, type BrokerProcess } from './broker-process.js';

/** A private `nats-server -js`: its URL, and `remove()` to stop it and delete its store. */
export interface NatsServer extends BrokerProcess {
  /** `nats://127.0.0.1:<port>`. */
  readonly url: string;
  readonly port: number;
  remove(): Promise<void>;
}

/**
 * Starts a NATS server with JetStream on a free 127.0.0.1 port, its store in a fresh temporary folder (never a shared
 * server on 4222). `stop()`/`kill()` then `start()` restart it on the same port and store.
 */
export async function startNatsServer(): Promise<NatsServer> {
  const dir = mkdtempSync(join(tmpdir(), 'geohook-nats-'));
  const port = await reservePort();
  const server = brokerProcess({
    name: 'nats-server',
    command: 'nats-server',
    args: ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', dir, '-n', `geohook-test-${port}`],
    env: { ...process.env, PATH: `${process.env.PATH ?? ''}:/usr/sbin:/usr/local/sbin` },
    readyLine: /Server is ready/,
    port,
    startMs: 20_000,
  });
  try {
    await server.start();
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    ...server,
    url: `nats://127.0.0.1:${port}`,
    port,
    async remove() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
