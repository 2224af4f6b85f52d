import t from 'tap';
import { runFaultSuite } from './fault-suite.js';

// About 70 s alone on two cores; more beside the other test files.
t.setTimeout(4 * 60_000);

t.test(
  'deliveries under faults (loads of 3 s, Redis outages shortened to 3 s): every acknowledged delivery stored exactly once with the receiver killed, Redis killed (strict; fast reported), Redis down with and without a spool, the receiver restarted under emulator retries',
  async (t) => {
    const { row } = await runFaultSuite(
      t,
      ['receiver-kill', 'redis-kill', 'redis-outage', 'redis-outage-spool', 'emulator-retry'],
      ['--load-seconds', '3', '--outage-seconds', '3'],
      ['receiver-kill fast', 'redis-kill strict', 'redis-kill fast', 'redis-outage fast', 'redis-outage-spool fast', 'emulator-retry fast'],
    );
    // Each fault really happened: the test cannot pass on a run that never hurt.
    for (const [fault, durability] of [
      ['receiver-kill', 'fast'],
      ['redis-kill', 'strict'],
      ['redis-kill', 'fast'],
      ['redis-outage', 'fast'],
    ] as const) {
      const r = row(fault, durability);
      t.ok(
        r.acknowledged < r.sent,
        `${fault} (${durability}): the fault refused some deliveries (${r.sent - r.acknowledged} of ${r.sent}: ${r.notes})`,
      );
    }
    const spool = row('redis-outage-spool');
    t.ok((spool.spooled ?? 0) > 0, `redis-outage-spool: deliveries were spooled during the outage (${spool.spooled})`);
    t.equal(spool.acknowledged, spool.sent, 'redis-outage-spool: with a spool every delivery is acknowledged');
    const emulator = row('emulator-retry');
    t.ok(
      (emulator.retried ?? 0) > 0,
      `emulator-retry: the emulator retried deliveries while the receiver was down (${emulator.retried}; ${emulator.gaveUp} given up)`,
    );
  },
);
