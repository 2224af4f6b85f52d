import { subscribe } from 'geohook';

// With CHANGES=Hosted/Parcels.FeatureServer and CHANGES_TRACK=status, each edited parcel is an event of its own.
// Redis: REDIS_URL, else the `geohook up` running in this folder (the URL it keeps in .geohook/redis/url).
const subscription = subscribe({
  prefix: process.env.GEOHOOK_PREFIX ?? 'geohook',
  handlers: {
    // Only the updates that changed status.
    'change.updated': {
      changed: ['status'],
      handler: ({ before, after, layer, key }) =>
        console.log(`${layer.name} ${key.globalId}: ${String(before?.attributes.status)} → ${String(after?.attributes.status)}`),
    },
    'change.deleted': (change) => console.log(`${change.layer.name} ${change.key.globalId}: deleted`),
  },
});
process.once('SIGTERM', () => subscription.close());
