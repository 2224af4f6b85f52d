import t from 'tap';
import { runFaultSuite } from './fault-suite.js';

// About 25 s alone on two cores; more beside the other test files.
t.setTimeout(4 * 60_000);

t.test(
  'relays under faults: every relayed event at every route with geohook killed or the endpoint down 3 s mid-burst (500 adds)',
  async (t) => {
    const { row } = await runFaultSuite(
      t,
      ['relay-kill', 'relay-sink-outage'],
      ['--outage-seconds', '3', '--relay-adds', '500'],
      ['relay-kill fast', 'relay-sink-outage fast'],
    );
    for (const fault of ['relay-kill', 'relay-sink-outage']) {
      const r = row(fault);
      t.ok(
        (r.writtenAtFault ?? 0) < r.sent,
        `${fault}: the fault struck mid-burst (${r.writtenAtFault} of ${r.sent} events relayed), and every event reached every route after it`,
      );
    }
  },
);
