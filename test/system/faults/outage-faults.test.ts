import t from 'tap';
import { runFaultSuite } from './fault-suite.js';

// A smoke of the rows (`npm run test:faults` runs them at 500/s with 30-s outages).
t.setTimeout(4 * 60_000);

t.test(
  'deliveries under outages (loads at 100/s, Redis down 3 s): every acknowledged delivery stored exactly once with Redis down, with and without a spool, and with the receiver restarted under emulator retries',
  async (t) => {
    const { row } = await runFaultSuite(
      t,
      ['redis-outage', 'redis-outage-spool', 'emulator-retry'],
      ['--load-seconds', '3', '--outage-seconds', '3', '--rate', '100'],
      ['redis-outage fast', 'redis-outage-spool fast', 'emulator-retry fast'],
    );
    const outage = row('redis-outage');
    t.ok(
      outage.acknowledged < outage.sent,
      `redis-outage: the outage refused some deliveries (${outage.sent - outage.acknowledged} of ${outage.sent})`,
    );
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
