import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { buildReceiver, loadConfig, type GeohookEvent } from 'geohook';

// REDIS_URL, HOOK_SECRETS, PORT… are read from the environment and validated once.
const config = loadConfig();
const receiver = await buildReceiver({ config });
await receiver.listen({ host: config.host, port: config.port });

// Every verified GP job event lands on the `gp-events` queue; consume it with a BullMQ Worker.
const worker = new Worker<GeohookEvent>(
  'gp-events',
  async (job) => {
    console.log(job.name, job.data.service.serviceName, job.data.id);
  },
  { connection: new Redis(config.redisUrl!, { maxRetriesPerRequest: null }), prefix: config.prefix },
);

process.once('SIGTERM', async () => {
  await receiver.close();
  await worker.close();
  process.exit(0);
});
