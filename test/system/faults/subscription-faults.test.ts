import t from 'tap';
import { runFaultSuite, type FaultRow } from './fault-suite.js';

// About 12 s alone on two cores; more beside the other test files.
t.setTimeout(3 * 60_000);

/** The `subscriptions` row's own field: what each subscription's queue held. */
interface SubscriptionsRow extends FaultRow {
  subscriptions?: { name: string; takes: number; found: number; lost: number; duplicated: number; strangers: number; consumed: number }[];
}

t.test(
  'subscriptions under kills (a burst of 6 s at 100/s): every acknowledged event in every subscription that takes it exactly once, with receivers and Redis (strict) killed mid-burst',
  async (t) => {
    const { row } = await runFaultSuite(t, ['subscriptions'], ['--rate', '100'], ['subscriptions strict']);
    const r: SubscriptionsRow = row('subscriptions', 'strict');
    t.ok(r.acknowledged < r.sent, `the faults refused some deliveries (${r.sent - r.acknowledged} of ${r.sent}: ${r.notes})`);
    t.match(r.notes, /its receiver killed/, 'a kill struck the receiver running the fan-out');
    const subscriptions = new Map((r.subscriptions ?? []).map((count) => [count.name, count]));
    t.same([...subscriptions.keys()], ['gp', 'everything', 'buffer-done'], 'a count for each subscription of the config');
    for (const count of subscriptions.values()) {
      t.ok(count.takes > 0, `sub-${count.name}: it takes acknowledged events (${count.takes})`);
      t.match(count, { found: count.takes, lost: 0, duplicated: 0, strangers: 0 }, `sub-${count.name}: each event it takes held once`);
      t.ok(count.consumed >= count.takes, `sub-${count.name}: its consumer was handed every event (${count.consumed})`);
    }
    // Deliveries alternate Buffer succeeded, Clip failed, Parcels created: the filters split them so.
    const everything = subscriptions.get('everything')!;
    t.equal(everything.takes, r.acknowledged, 'feature.* and gp.* take every acknowledged delivery');
    t.ok(subscriptions.get('gp')!.takes < everything.takes, 'gp.* takes no feature event');
    t.ok(subscriptions.get('buffer-done')!.takes < subscriptions.get('gp')!.takes, 'Buffer’s succeeded jobs are fewer than all GP events');
  },
);
