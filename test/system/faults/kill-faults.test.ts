import t from 'tap';
import { runFaultSuite } from './fault-suite.js';

// A smoke of the rows (`npm run test:faults` runs them at 500/s): about 10 CPU-seconds.
t.setTimeout(4 * 60_000);

t.test(
  'deliveries under kills (loads of 3 s at 100/s): every acknowledged delivery stored exactly once with the receiver killed, Redis killed (strict; fast reported)',
  async (t) => {
    const { row } = await runFaultSuite(
      t,
      ['receiver-kill', 'redis-kill'],
      ['--load-seconds', '3', '--rate', '100'],
      ['receiver-kill fast', 'redis-kill strict', 'redis-kill fast'],
    );
    // Each fault really happened: the test cannot pass on a run that never hurt.
    for (const [fault, durability] of [
      ['receiver-kill', 'fast'],
      ['redis-kill', 'strict'],
      ['redis-kill', 'fast'],
    ] as const) {
      const r = row(fault, durability);
      t.ok(
        r.acknowledged < r.sent,
        `${fault} (${durability}): the fault refused some deliveries (${r.sent - r.acknowledged} of ${r.sent}: ${r.notes})`,
      );
    }
  },
);
