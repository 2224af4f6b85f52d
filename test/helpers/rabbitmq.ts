import type { Test } from 'tap';
import { startRabbitmqServer, type RabbitmqServer } from '../../harness/brokers/rabbitmq-server.js';

/** A private RabbitMQ node for one test file. */
export type TestRabbitmq = RabbitmqServer;

/** Starts a private RabbitMQ node (`startRabbitmqServer`): slow to start, one per test file; removed at teardown. */
export async function startRabbitmq(t: Test): Promise<TestRabbitmq> {
  const server = await startRabbitmqServer();
  t.teardown(() => server.remove());
  return server;
}
