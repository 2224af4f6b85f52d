import { subscribe } from 'geohook';

// With CHANGES=Hosted/Parcels.FeatureServer and CHANGES_TRACK=status, each edited parcel is an event of its own.
const subscription = subscribe({
  connection: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  prefix: process.env.GEOHOOK_PREFIX ?? 'geohook',
  handlers: {
    'change.updated': (change) => {
      if (!change.changedFields?.includes('status')) return;
      const { before, after, layer, key } = change;
      console.log(`${layer.name} ${key.globalId}: ${String(before?.attributes.status)} → ${String(after?.attributes.status)}`);
    },
    'change.deleted': (change) => console.log(`${change.layer.name} ${change.key.globalId}: deleted`),
  },
});
process.once('SIGTERM', () => subscription.close());
