import t from 'tap';
import { runFaultSuite } from './fault-suite.js';

// About 40 s alone on two cores (a killed resolver's range is taken again after its lock lapses); more beside the
// other test files.
t.setTimeout(4 * 60_000);

t.test(
  'submissions under faults (60 at 10/s): every submission one complete change.submission with geohook SIGKILLed twice mid-run',
  async (t) => {
    const { row } = await runFaultSuite(t, ['submissions-kill'], ['--submissions', '60'], ['submissions-kill fast']);
    const r = row('submissions-kill');
    t.equal(r.found, r.sent, `every submission was written once, whole (${r.found} of ${r.sent})`);
    t.ok((r.writtenAtFault ?? 0) > 0, `the first kill came once change events were being written (${r.writtenAtFault})`);
  },
);
