import { fetchChanges, fetchJobResult, subscribe } from 'geohook';

// A delivery says what happened, not the data: read the edits, or what the job produced, from the GIS server.
const auth = { username: process.env.ADMIN_USERNAME ?? 'admin', password: process.env.ADMIN_PASSWORD ?? 'admin.pass' };

const subscription = subscribe({
  connection: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  prefix: process.env.GEOHOOK_PREFIX ?? 'geohook',
  handlers: {
    'feature.*': async (event) => {
      for (const { edits } of await fetchChanges(event, { auth })) {
        for (const layer of edits) console.log(`layer ${layer.id}: ${layer.features.adds.length} added`);
      }
    },
    'gp.job.succeeded': async (event) => {
      const { jobId, results } = await fetchJobResult(event, { auth });
      console.log(`job ${jobId}: ${Object.keys(results).join(', ')}`);
    },
  },
});
process.once('SIGTERM', () => subscription.close());
