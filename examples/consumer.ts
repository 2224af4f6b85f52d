import { subscribe } from 'geohook';

// Redis: REDIS_URL, else the `geohook up` running in this folder (the URL it keeps in .geohook/redis/url).
const subscription = subscribe({
  prefix: process.env.GEOHOOK_PREFIX ?? 'geohook',
  handlers: {
    'gp.job.*': (event) => console.log(`GP job ${event.type} on ${event.service.serviceName}`),
    'feature.*': (event) => console.log(`${event.types.join(', ')} on ${event.service.serviceName}`),
  },
});
process.once('SIGTERM', () => subscription.close());
