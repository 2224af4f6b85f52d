import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import pino from 'pino';
import t from 'tap';
import { logWorkerErrors } from '../../src/queue/worker-errors.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

t.test("a worker's unreachable Redis is said once, as a warning; its other errors each time", async (t) => {
  const redis = await startRedis(t);
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null, retryStrategy: () => 20 });
  connection.on('error', () => undefined);
  t.teardown(() => connection.disconnect());
  const lines: { level: number; msg: string }[] = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line) as { level: number; msg: string }) });
  const worker = new Worker('probe', async () => undefined, { connection, prefix: 'worker-errors-test' });
  let errors = 0;
  worker.on('error', () => (errors += 1));
  logWorkerErrors(worker, log, 'probe worker error');
  await worker.waitUntilReady();

  await redis.stop();
  await waitFor('five failed reconnects', async () => errors >= 5);
  t.same(
    lines.map(({ level, msg }) => [level, msg]),
    [[40, 'probe worker error: Redis unreachable, BullMQ retries (said once a minute at most)']],
    `${errors} errors, one warning`,
  );

  worker.emit('error', new Error('a script failed'));
  worker.emit('error', new Error('a script failed'));
  t.same(
    lines.slice(1).map(({ level, msg }) => [level, msg]),
    [
      [50, 'probe worker error'],
      [50, 'probe worker error'],
    ],
    'any other error, each time',
  );
  void worker.close(true).catch(() => undefined);
});
