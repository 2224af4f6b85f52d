import { Redis } from 'ioredis';
import t from 'tap';
import { openQueue } from '../../src/queue/open-queue.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

t.test("a queue's connection lost prints nothing of its own: the connection's owner says it, once, in its logs", async (t) => {
  const redis = await startRedis(t);
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null, retryStrategy: () => 20 });
  let connectionErrors = 0;
  connection.on('error', () => (connectionErrors += 1));
  t.teardown(() => connection.disconnect());
  const queue = openQueue('probe', { connection, prefix: 'open-queue-test' });
  await queue.add('probe', {});

  const printed: unknown[][] = [];
  const { error } = console;
  console.error = (...args: unknown[]) => void printed.push(args);
  t.teardown(() => {
    console.error = error;
  });
  await redis.stop();
  await waitFor('five failed reconnects', async () => connectionErrors >= 5);
  console.error = error;
  t.same(printed, [], 'no stack printed on stderr by the queue');
});
