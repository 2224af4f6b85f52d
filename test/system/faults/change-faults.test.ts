import t from 'tap';
import { runFaultSuite } from './fault-suite.js';

// About 40 s alone on two cores (a killed change resolver's range is taken again after its lock lapses); more
// beside the other test files.
t.setTimeout(4 * 60_000);

t.test(
  'change events under faults (2,000 adds): every added feature one change event with the resolver or Redis killed mid-resolution',
  async (t) => {
    const { row } = await runFaultSuite(
      t,
      ['changes-resolver-kill', 'changes-redis-kill'],
      ['--adds', '2000'],
      ['changes-resolver-kill fast', 'changes-redis-kill strict'],
    );
    for (const [fault, durability] of [
      ['changes-resolver-kill', 'fast'],
      ['changes-redis-kill', 'strict'],
    ] as const) {
      const r = row(fault, durability);
      t.ok(
        (r.writtenAtFault ?? 0) > 0 && (r.writtenAtFault ?? 0) < r.sent,
        `${fault}: the kill came mid-resolution (${r.writtenAtFault} of ${r.sent} change events written)`,
      );
    }
  },
);
