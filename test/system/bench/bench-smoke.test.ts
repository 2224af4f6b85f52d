import t, { type Test } from 'tap';
import { median } from '../../../harness/bench/figures.js';
import type { StreamsResult } from '../../../harness/bench/streams/run-streams.js';
import { bench } from './run-bench.js';

// Every section of the bench, each starting its own processes: a minute or two alone on two cores, two to three times
// that beside the other test files.
t.setTimeout(5 * 60_000);

interface CaseFigures {
  rps: number;
  sustainedRps: number;
  p99Ms: number;
  rssMb: number;
  lost: number;
}

interface ChangeFigures {
  features: number;
  events: number;
  eventsPerSec: number;
  rssDeltaMb: number;
  floorPerSec: number;
  vsFloor: number;
  p50Ms: number;
  p99Ms: number;
  floor: { rows: number; jobs: number };
  latency: { edits: number; received: number };
}

/** Every change event arrived (the generation's, the floor's, the single edits'), and every figure is a number. */
function checkChanges(t: Test, changes: ChangeFigures, features: number): void {
  t.match(
    changes,
    { features, events: features, floor: { rows: features, jobs: features } },
    'one change event per feature added, as many floor jobs',
  );
  t.equal(changes.latency.received, changes.latency.edits, `the consumer got each of the ${changes.latency.edits} single edits' events`);
  for (const field of ['eventsPerSec', 'floorPerSec', 'vsFloor', 'p50Ms', 'p99Ms'] as const)
    t.ok(Number.isFinite(changes[field]) && changes[field] > 0, `${field}: ${changes[field]}`);
  t.ok(Number.isFinite(changes.rssDeltaMb) && changes.rssDeltaMb >= 0, `rssDeltaMb: ${changes.rssDeltaMb}`);
  t.ok(changes.p99Ms >= changes.p50Ms);
}

/** The figures of the mirror section. */
interface MirrorFigures {
  features: number;
  rowsPerSec: number;
  copyFloorPerSec: number;
  copyCpuUsPerRow: { server: number; emulator: number };
  edits: number;
  p50Ms: number;
  p99Ms: number;
}

function checkMirror(t: Test, mirror: MirrorFigures, features: number, edits: number): void {
  t.match(mirror, { features, edits });
  t.ok(mirror.rowsPerSec > 0 && mirror.copyFloorPerSec > 0, `copied at ${mirror.rowsPerSec}/s, a bare COPY at ${mirror.copyFloorPerSec}/s`);
  t.ok(mirror.p99Ms >= mirror.p50Ms && mirror.p50Ms > 0, 'edit latencies');
  const { server, emulator } = mirror.copyCpuUsPerRow;
  t.ok(
    server > 0 && emulator > 0 && Number.isFinite(server + emulator),
    `CPU per row copied: server ${server} µs, emulator ${emulator} µs`,
  );
}

interface RelayFigures {
  events: number;
  deliveriesPerSec: number;
  naivePerSec: number;
  vsNaive: number;
  paceEvents: number;
  p50Ms: number;
  p99Ms: number;
  repeats: number;
  transformEvents: number;
  transformPerSec: number;
  transformVsPlain: number;
  warmUpEvents: number;
  order: string[];
}

/** Every queued event reached the sink (none twice), and every figure is a number. */
function checkRelay(t: Test, relay: RelayFigures, events: number): void {
  t.match(relay, { events, repeats: 0 }, `the ${events} queued events delivered, none twice`);
  t.equal(relay.transformEvents, events, 'as many events through the route with a transform');
  t.equal(relay.transformVsPlain, relay.transformPerSec / relay.deliveriesPerSec, 'the transform route against the plain one, same run');
  t.ok(relay.warmUpEvents > 0, 'both routes warmed up before the timed rounds');
  t.same(relay.order, ['plain', 'transform', 'transform', 'plain'], 'the timed rounds alternate which route drains first');
  for (const field of ['deliveriesPerSec', 'transformPerSec', 'naivePerSec', 'vsNaive', 'p50Ms', 'p99Ms'] as const)
    t.ok(Number.isFinite(relay[field]) && relay[field] > 0, `${field}: ${relay[field]}`);
  t.ok(relay.paceEvents > 0 && relay.p99Ms >= relay.p50Ms, `${relay.paceEvents} change events timed at a steady pace`);
}

interface SubscriptionFigures {
  subscriptions: number;
  ackPerSec0: number;
  ackPerSec16: number;
  ackRatio16: number;
  fanoutPerSec: number;
  p99Ms: number;
  rounds: { round: number; subscriptions: number; ackPerSec: number; non2xx: number; errors: number }[];
  fanout: { events: number; subscriptions: number; fewestHeld: number; dropped: number };
  latency: { events: number; p50Ms: number; p99Ms: number; non2xx: number; errors: number };
}

/** Each lane's burst against its bare producer, and the paced events timed (as many as the burst, so few in a smoke). */
function checkStreams(t: Test, streams: StreamsResult, events: number): void {
  t.match(streams, { events, paceEvents: events }, `${events} events through each lane, as many paced`);
  for (const field of ['natsPerSec', 'bareNatsPerSec', 'vsBareNats', 'amqpPerSec', 'bareAmqpPerSec', 'vsBareAmqp', 'p99Ms'] as const)
    t.ok(Number.isFinite(streams[field]) && streams[field] > 0, `${field}: ${streams[field]}`);
  for (const [broker, rate, ratio] of [
    ['nats', 'natsPerSec', 'vsBareNats'],
    ['amqp', 'amqpPerSec', 'vsBareAmqp'],
  ] as const) {
    const rounds = streams.bursts[broker];
    t.equal(rounds.length, streams.rounds, `${broker}: a burst of each side per round`);
    t.ok(
      rounds.every(({ laneStartMs }) => Number.isFinite(laneStartMs) && laneStartMs > 0),
      `${broker}: the lane's start to its first acknowledgement, apart from its rate`,
    );
    t.equal(streams[rate], median(rounds.map(({ lanePerSec }) => lanePerSec)), `${broker}: the lane's median rate`);
    t.equal(
      streams[ratio],
      median(rounds.map(({ barePerSec, lanePerSec }) => lanePerSec / barePerSec)),
      `${broker}: the median of the rounds' ratios`,
    );
  }
}

/** Acknowledgements with 0 and 16 subscriptions in one round, every logged event in all 16 queues, each paced one timed. */
function checkSubscriptions(t: Test, subscriptions: SubscriptionFigures, events: number): void {
  t.same(
    subscriptions.rounds.map((turn) => turn.subscriptions),
    [0, 16],
    'a turn without subscriptions, then one with 16',
  );
  for (const turn of subscriptions.rounds)
    t.match(turn, { non2xx: 0, errors: 0 }, `${turn.subscriptions} subscriptions: every delivery 2xx`);
  for (const field of ['ackPerSec0', 'ackPerSec16', 'ackRatio16', 'fanoutPerSec'] as const)
    t.ok(Number.isFinite(subscriptions[field]) && subscriptions[field] > 0, `${field}: ${subscriptions[field]}`);
  t.equal(subscriptions.ackRatio16, subscriptions.ackPerSec16 / subscriptions.ackPerSec0, 'one round: the ratio of its two turns');
  t.match(
    subscriptions.fanout,
    { events, subscriptions: 16, fewestHeld: events, dropped: 0 },
    `the ${events} logged events in each of the 16 queues`,
  );
  t.match(subscriptions.latency, { events, non2xx: 0, errors: 0 }, `${events} deliveries timed to the last queue`);
  t.ok(subscriptions.p99Ms === subscriptions.latency.p99Ms && subscriptions.p99Ms >= subscriptions.latency.p50Ms, 'latency percentiles');
}

t.test('the bench (--json, one short round) measures every case, loses no job and prints one JSON object', async (t) => {
  const stdout = await bench([
    ...['--rounds', '1', '--duration', '1', '--warmup', '0'],
    ...['--e2e-events', '100', '--emulator-deliveries', '50', '--backfill-edits', '10', '--emulator-features', '100'],
    ...['--changes-features', '100', '--changes-edits', '10', '--mirror-features', '100', '--mirror-edits', '5'],
    ...['--relay-events', '100', '--subscription-events', '100', '--stream-events', '100', '--submission-count', '2'],
    '--json',
  ]);

  const report = JSON.parse(stdout) as {
    durability: string;
    bare: CaseFigures;
    naive: CaseFigures;
    geohook: CaseFigures;
    geohookStrict: CaseFigures;
    ratios: { vsBare: number; vsNaive: number; strictVsFast: number; sustainedVsNaive: number };
    rounds: { case: string; acked: number; jobs?: number; sustainedRps: number; drainMs: number }[];
    e2e: {
      events: number;
      acked: number;
      consumed: number;
      consumedPerSec: number;
      drainSeconds: number;
      drained: boolean;
      cpuPerEventUs: Record<string, number>;
    };
    emulator: { deliveries: number; received: number; deliveriesPerSec: number };
    emulatorFeatures: { features: number; resultRows: number; peakRssMib: number; idleRssMib: number };
    backfill: { edits: number; secondsAfterStart: number; events: number; coveredOnce: boolean };
    changes: ChangeFigures;
    mirror: MirrorFigures;
    relay: RelayFigures;
    subscriptions: SubscriptionFigures;
    streams: StreamsResult;
    submissions: Record<'survey123' | 'window', { submissions: number; received: number; p50Ms: number; p99Ms: number }> & {
      windowMs: number;
    };
    targets: { name: string }[];
    problems: string[];
  };
  t.equal(report.durability, 'fast');
  for (const name of ['bare', 'naive', 'geohook', 'geohookStrict'] as const) {
    t.ok(report[name].rps > 0, `${name} answered 2xx`);
    t.ok(report[name].sustainedRps > 0, `${name} sustained a rate`);
    t.equal(report[name].lost, 0, `${name} lost no job`);
  }
  t.ok(report.geohook.p99Ms > 0 && report.geohook.rssMb > 0, 'geohook has p99 and RSS');
  t.ok(
    [report.ratios.vsBare, report.ratios.vsNaive, report.ratios.strictVsFast, report.ratios.sustainedVsNaive].every(Number.isFinite),
    'ratios are numbers',
  );
  for (const round of report.rounds) t.ok(round.drainMs >= 0 && round.sustainedRps > 0, `${round.case}: sustained ${round.sustainedRps}/s`);
  t.same(
    report.rounds.map((round) => round.case),
    ['bare', 'naive', 'geohook', 'geohook-strict'],
  );
  for (const round of report.rounds.filter((r) => r.jobs !== undefined)) t.equal(round.jobs, round.acked, `${round.case}: one job per 2xx`);
  t.match(report.e2e, { events: 100, acked: 100, consumed: 100, drained: true });
  t.ok(report.e2e.consumedPerSec > 0 && report.e2e.drainSeconds >= 0, 'e2e figures');
  t.same(Object.keys(report.e2e.cpuPerEventUs).sort(), ['consumer', 'loadGenerator', 'receiver', 'redis'], 'CPU per event of each piece');
  t.ok(
    Object.values(report.e2e.cpuPerEventUs).every((us) => us > 0),
    'each piece spent CPU',
  );
  t.equal(report.emulator.received, report.emulator.deliveries, 'every emulator delivery reached the sink');
  t.ok(report.emulator.deliveriesPerSec > 0);
  t.match(report.emulatorFeatures, { features: 100, resultRows: 100 }, 'every feature added came back from extractChanges');
  t.ok(report.emulatorFeatures.peakRssMib >= report.emulatorFeatures.idleRssMib && report.emulatorFeatures.idleRssMib > 0);
  t.match(report.backfill, { edits: 10, events: 2, coveredOnce: true }, 'the edits missed while down: one backfilled event');
  t.ok(report.backfill.secondsAfterStart > 0);
  checkChanges(t, report.changes, 100);
  checkMirror(t, report.mirror, 100, 5);
  checkRelay(t, report.relay, 100);
  checkSubscriptions(t, report.subscriptions, 100);
  checkStreams(t, report.streams, 100);
  for (const way of ['survey123', 'window'] as const) {
    const figures = report.submissions[way];
    t.match(figures, { submissions: 2, received: 2 }, `${way}: every submission handed over, closed by its ${way}`);
    t.ok(figures.p99Ms >= figures.p50Ms && figures.p50Ms > 0, `${way}: p50 and p99`);
  }
  t.ok(report.submissions.window.p50Ms >= report.submissions.windowMs, 'a submission without its webhook waits for its window');
  t.ok(
    report.targets.some((target) => target.name.startsWith('submission')),
    'the submissions have targets',
  );
  t.ok(
    report.targets.some((target) => target.name.startsWith('relay')),
    'the relays have targets',
  );
  t.ok(
    report.targets.some((target) => target.name.startsWith('fan-out')),
    'the subscriptions have targets',
  );
  t.ok(
    report.targets.some((target) => target.name.startsWith('stream lane')),
    'the streams have targets',
  );
  t.ok(
    report.targets.some((target) => target.name.startsWith('mirror')),
    'the mirror has targets',
  );
  t.ok(
    report.targets.some((target) => target.name.startsWith('change events')),
    'the change events have targets',
  );
  t.same(report.problems, []);
});
