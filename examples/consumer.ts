import { subscribe } from 'geohook';

const subscription = subscribe({
  connection: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  prefix: process.env.GEOHOOK_PREFIX ?? 'geohook',
  handlers: {
    'gp.job.*': (event) => console.log(`GP job ${event.type} on ${event.service.serviceName}`),
    'feature.*': (event) => console.log(`${event.types.join(', ')} on ${event.service.serviceName}`),
  },
});
process.once('SIGTERM', () => subscription.close());
