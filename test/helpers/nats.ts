import type { Test } from 'tap';
import { startNatsServer, type NatsServer } from '../../harness/brokers/nats-server.js';

/** A private `nats-server -js` for one test file. */
export type TestNats = NatsServer;

/** Starts a private NATS server with JetStream (`startNatsServer`), stopped and its store deleted at teardown. */
export async function startNats(t: Test): Promise<TestNats> {
  const server = await startNatsServer();
  t.teardown(() => server.remove());
  return server;
}
