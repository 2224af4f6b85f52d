import { fetchChanges, fetchJobResult, subscribe } from 'geohook';

// A delivery says what happened, not the data: read the edits, or what the job produced, from the GIS server.
// The token goes only to the server you name, and the password only to the token URL you name: an event
// says where its edits are, never where your credentials go.
const server = process.env.GIS_SERVER ?? 'http://127.0.0.1:7080';
const auth = {
  username: process.env.ADMIN_USERNAME ?? 'admin',
  password: process.env.ADMIN_PASSWORD ?? 'admin.pass',
  tokenUrl: `${server}/arcgis/sharing/rest/generateToken`,
};
const options = { auth, allowedOrigins: [server] };

const subscription = subscribe({
  prefix: process.env.GEOHOOK_PREFIX ?? 'geohook',
  handlers: {
    'feature.*': async (event) => {
      for (const { edits } of await fetchChanges(event, options)) {
        for (const layer of edits) console.log(`layer ${layer.id}: ${layer.features.adds.length} added`);
      }
    },
    'gp.job.succeeded': async (event) => {
      const { jobId, results } = await fetchJobResult(event, options);
      console.log(`job ${jobId}: ${Object.keys(results).join(', ')}`);
    },
  },
});
process.once('SIGTERM', () => subscription.close());
