import { subscribe } from 'geohook';

const subscription = subscribe({
  prefix: process.env.GEOHOOK_PREFIX ?? 'geohook',
  handlers: {
    'gp.job.*': (event) => console.log(`GP job ${event.type} on ${event.service.serviceName}`),
    'feature.*': (event) => console.log(`${event.types.join(', ')} on ${event.service.serviceName}`),
  },
});
process.once('SIGTERM', () => subscription.close());
