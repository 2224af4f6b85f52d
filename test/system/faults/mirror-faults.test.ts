import t from 'tap';
import { runFaultSuite } from './fault-suite.js';

// About 15 s alone on two cores; more beside the other test files.
t.setTimeout(4 * 60_000);

t.test(
  'the PostGIS mirror under faults: 500 parcels and their attachments tables equal to the layer after 100 edits and attachment edits across two kills mid-sync, a receiver outage and a PostgreSQL restart',
  async (t) => {
    const { row } = await runFaultSuite(t, ['mirror-kill'], ['--mirror-features', '500', '--mirror-edits', '100'], ['mirror-kill fast']);
    const mirror = row('mirror-kill');
    t.equal(mirror.acknowledged, mirror.sent, `every edit was applied by the server (${mirror.notes})`);
    t.ok(mirror.found > 0, `the tables hold the layer's ${mirror.found} rows and attachments`);
  },
);
