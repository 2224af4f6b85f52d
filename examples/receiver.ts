import { buildReceiver, loadConfig, subscribe } from 'geohook';

// REDIS_URL, HOOK_SECRETS, PORT… are read from the environment and validated once.
const config = loadConfig();
const receiver = await buildReceiver({ config });
await receiver.listen({ host: config.host, port: config.port });

// Every verified GP job event lands on the `gp-events` queue; handle it with a typed handler.
const subscription = subscribe({
  connection: config.redisUrl!,
  prefix: config.prefix,
  handlers: {
    'gp.*': (event) => console.log(event.type, event.service.serviceName, event.id),
  },
});

process.once('SIGTERM', async () => {
  await receiver.close();
  await subscription.close();
  process.exit(0);
});
