import type { BackfillResult } from './backfill-outage.js';
import { changeTargets, formatChanges } from './changes/changes-report.js';
import type { ChangesResult } from './changes/run-changes.js';
import type { EmulatorResult } from './emulator-fanout.js';
import type { EmulatorFeaturesResult } from './emulator-features.js';
import type { EndToEndResult } from './end-to-end.js';
import { fixed, median, thousands } from './figures.js';
import type { CaseName, RoundResult } from './http-cases.js';
import { formatMirror, mirrorTargets } from './mirror/mirror-report.js';
import type { MirrorResult } from './mirror/run-mirror.js';
import { formatFrames, type ProfileSummary } from './profile/top-frames.js';
import type { Durability } from './redis.js';
import { formatRelay, relayTargets } from './relay/relay-report.js';
import type { RelayResult } from './relay/run-relay.js';
import type { StreamsResult } from './streams/run-streams.js';
import { formatStreams, streamsTargets } from './streams/streams-report.js';
import type { SubmissionsResult } from './submissions/run-submissions.js';
import { formatSubmissions, submissionsTargets } from './submissions/submissions-report.js';
import type { SubscriptionsResult } from './subscriptions/run-subscriptions.js';
import { formatSubscriptions, subscriptionTargets } from './subscriptions/subscriptions-report.js';
import { alignedTable } from './table.js';
import { formatTargets, type Target } from './targets.js';

/** One case over all rounds. */
export interface CaseSummary {
  /** Medians over the rounds. */
  rps: number;
  /** Jobs made per second of load window plus drain (see `RoundResult.sustainedRps`). */
  sustainedRps: number;
  p99Ms: number;
  p50Ms: number;
  /** Sums over the rounds. */
  non2xx: number;
  errors: number;
  /** The highest peak RSS of the server over the rounds, MiB. */
  rssMb: number;
  serverCpuPct: number;
  /** 2xx answers without a job in Redis (should be 0). */
  lost: number;
}

/** Ratios of req/s within one round. */
export interface RoundRatios {
  round: number;
  /** geohook / bare Fastify. */
  vsBare: number;
  /** geohook / the naive receiver. */
  vsNaive: number;
  /** The naive receiver / bare Fastify. */
  naiveVsBare: number;
  /** geohook on a Redis that fsyncs at every write / geohook on the run's Redis. */
  strictVsFast: number;
  /** geohook / the naive receiver, in jobs sustained per second. */
  sustainedVsNaive: number;
}

type RatioName = Exclude<keyof RoundRatios, 'round'>;

/** How the run was made, and on what. */
export interface BenchSettings {
  quick: boolean;
  rounds: number;
  durationSeconds: number;
  warmupSeconds: number;
  connections: number;
  bodyBytes: number;
  e2eEvents: number;
  e2eConsumerConcurrency: number;
  emulatorDeliveries: number;
  emulatorWebhooks: number;
  geohookLogLevel: string;
  cpuProf: boolean;
  node: string;
  redis: string;
  cpus: number;
  cpuModel: string;
  /** `os.loadavg()` before and after: other work on the machine makes the figures noisy. */
  loadAverageBefore: number[];
  loadAverageAfter: number[];
  elapsedSeconds: number;
}

/** The JSON report (`--json`), and what the table is printed from. */
export interface BenchReport {
  durability: Durability;
  settings: BenchSettings;
  bare: CaseSummary;
  naive: CaseSummary;
  geohook: CaseSummary;
  /** geohook on a Redis with `appendfsync always`, whatever the run's durability. */
  geohookStrict: CaseSummary;
  /** Medians of the per-round ratios of req/s, and those ratios. */
  ratios: Record<RatioName, number> & { perRound: RoundRatios[] };
  rounds: RoundResult[];
  e2e: EndToEndResult;
  emulator: EmulatorResult;
  emulatorFeatures: EmulatorFeaturesResult;
  backfill: BackfillResult;
  /** Change events: one generation of many adds resolved, against the floor; single edits' latency. */
  changes: ChangesResult;
  /** The PostGIS mirror: the initial copy against a bare COPY; single edits to their row committed. */
  mirror: MirrorResult;
  /** Relays: events delivered to a local sink, against a worker awaiting one fetch per event; change event to sink. */
  relay: RelayResult;
  /** Subscriptions: acknowledgements with 0 and 16, the fan-out's rate, 202 to the last subscription's queue. */
  subscriptions: SubscriptionsResult;
  /** Streams: each lane (fan-out included) into JetStream and RabbitMQ against a bare producer; stored event to acknowledged publish. */
  streams: StreamsResult;
  /** Submissions: last edit to change.submission, closed by the Survey123 webhook and by the window. */
  submissions: SubmissionsResult;
  targets: Target[];
  /** Correctness failures (lost jobs, undrained queues, missing deliveries): the run exits 1. */
  problems: string[];
  /** With `--cpu-prof`: the geohook case's server processes, the end-to-end consumer, the emulator, and geohook's server of the change events. */
  cpuProfile?: { geohook: ProfileSummary; consumer: ProfileSummary; emulator: ProfileSummary; changes: ProfileSummary };
}

export function summarizeCase(rounds: readonly RoundResult[], name: CaseName): CaseSummary {
  const mine = rounds.filter((round) => round.case === name);
  return {
    rps: median(mine.map((round) => round.rps)),
    sustainedRps: median(mine.map((round) => round.sustainedRps)),
    p99Ms: median(mine.map((round) => round.p99Ms)),
    p50Ms: median(mine.map((round) => round.p50Ms)),
    non2xx: mine.reduce((sum, round) => sum + round.non2xx, 0),
    errors: mine.reduce((sum, round) => sum + round.errors, 0),
    rssMb: Math.max(...mine.map((round) => round.rssMb)),
    serverCpuPct: median(mine.map((round) => round.serverCpuPct)),
    lost: mine.reduce((sum, round) => sum + Math.max(0, round.acked - (round.jobs ?? round.acked)), 0),
  };
}

export function perRoundRatios(rounds: readonly RoundResult[]): BenchReport['ratios'] {
  const numbers = [...new Set(rounds.map((round) => round.round))];
  const caseOf = (round: number, name: CaseName): RoundResult | undefined => rounds.find((r) => r.round === round && r.case === name);
  const rpsOf = (round: number, name: CaseName): number => caseOf(round, name)?.rps ?? Number.NaN;
  const sustainedOf = (round: number, name: CaseName): number => caseOf(round, name)?.sustainedRps ?? Number.NaN;
  const perRound = numbers.map((round): RoundRatios => ({
    round,
    vsBare: rpsOf(round, 'geohook') / rpsOf(round, 'bare'),
    vsNaive: rpsOf(round, 'geohook') / rpsOf(round, 'naive'),
    naiveVsBare: rpsOf(round, 'naive') / rpsOf(round, 'bare'),
    strictVsFast: rpsOf(round, 'geohook-strict') / rpsOf(round, 'geohook'),
    sustainedVsNaive: sustainedOf(round, 'geohook') / sustainedOf(round, 'naive'),
  }));
  const medianOf = (key: RatioName): number => median(perRound.map((r) => r[key]));
  return {
    vsBare: medianOf('vsBare'),
    vsNaive: medianOf('vsNaive'),
    naiveVsBare: medianOf('naiveVsBare'),
    strictVsFast: medianOf('strictVsFast'),
    sustainedVsNaive: medianOf('sustainedVsNaive'),
    perRound,
  };
}

const aof = (durability: Durability): string => (durability === 'strict' ? 'fsync always (strict)' : 'fsync every second (fast)');

export function evaluateTargets(report: Omit<BenchReport, 'targets' | 'problems'>): Target[] {
  const { geohook, naive, ratios, e2e, emulator } = report;
  const p99Limit = Math.min(30, naive.p99Ms * 1.2);
  return [
    {
      name: 'geohook vs naive, sustained, in every round',
      goal: '≥ 1.25×',
      value: ratios.perRound.map((round) => `${fixed(round.sustainedVsNaive, 2)}×`).join(' / '),
      met: ratios.perRound.every((round) => round.sustainedVsNaive >= 1.25),
    },
    { name: 'strict vs fast durability', goal: '≥ 0.95×', value: `${fixed(ratios.strictVsFast, 2)}×`, met: ratios.strictVsFast >= 0.95 },
    {
      name: 'geohook p99',
      goal: `≤ 30 ms and ≤ naive × 1.2 (${fixed(naive.p99Ms * 1.2, 1)} ms)`,
      value: `${fixed(geohook.p99Ms, 1)} ms`,
      met: geohook.p99Ms <= p99Limit,
    },
    { name: 'geohook peak RSS', goal: '≤ 150 MiB', value: `${fixed(geohook.rssMb)} MiB`, met: geohook.rssMb <= 150 },
    { name: 'end to end consumed', goal: '≥ 3,000/s', value: `${thousands(e2e.consumedPerSec)}/s`, met: e2e.consumedPerSec >= 3000 },
    {
      name: 'queues empty after load',
      goal: '≤ 30 s',
      value: e2e.drained ? `${fixed(e2e.drainSeconds, 1)} s` : `not within ${fixed(e2e.drainSeconds)} s`,
      met: e2e.drained && e2e.drainSeconds <= 30,
    },
    {
      name: 'emulator signed deliveries',
      goal: '≥ 2,000/s',
      value: `${thousands(emulator.deliveriesPerSec)}/s`,
      met: emulator.deliveriesPerSec >= 2000,
    },
    ...changeTargets(report.changes),
    ...mirrorTargets(report.mirror),
    ...relayTargets(report.relay),
    ...subscriptionTargets(report.subscriptions),
    ...streamsTargets(report.streams),
    ...submissionsTargets(report.submissions),
  ];
}

/** One line on the emulator's feature store under volume. */
export function formatEmulatorFeatures(result: EmulatorFeaturesResult): string {
  return (
    `emulator features: bulk of ${thousands(result.features)} Parcels in ${fixed(result.bulkSeconds, 1)} s; asynchronous extractChanges of them ` +
    `(${thousands(result.resultRows)} rows, ${fixed(result.resultMiB)} MiB) in ${fixed(result.extractSeconds, 1)} s; emulator RSS ${fixed(result.idleRssMib)} MiB idle, peak ${fixed(result.peakRssMib)} MiB`
  );
}

/** The human report: the case table, the rounds, end to end, emulator, targets, problems. */
export function formatReport(report: BenchReport): string {
  const lines: string[] = [];
  const caseRow = (label: string, summary: CaseSummary, vsBare: string, vsNaive: string, enqueues = true): string[] => [
    label,
    thousands(summary.rps),
    vsBare,
    vsNaive,
    thousands(summary.sustainedRps),
    fixed(summary.p50Ms, 1),
    fixed(summary.p99Ms, 1),
    String(summary.non2xx),
    String(summary.errors),
    fixed(summary.rssMb),
    fixed(summary.serverCpuPct),
    enqueues ? String(summary.lost) : '–',
  ];
  const { settings } = report;
  lines.push(
    `geohook bench: ${settings.rounds} round(s) × ${settings.durationSeconds} s per case after ${settings.warmupSeconds} s of warm-up, ${settings.connections} connections, ` +
      `distinct signed ${settings.bodyBytes}-byte bodies, Redis ${settings.redis} with AOF ${aof(report.durability)}, geohook-strict's with ${aof('strict')}`,
  );
  lines.push(
    `machine: ${settings.cpus} × ${settings.cpuModel}, Node ${settings.node}; load average before ${settings.loadAverageBefore.map((n) => n.toFixed(2)).join(' ')}, after ${settings.loadAverageAfter.map((n) => n.toFixed(2)).join(' ')}`,
  );
  lines.push('');
  lines.push(
    ...alignedTable([
      [
        'case (median of rounds)',
        'req/s',
        'vs bare',
        'vs naive',
        'sustained/s',
        'p50 ms',
        'p99 ms',
        'non-2xx',
        'errors',
        'max RSS MiB',
        'server CPU %',
        'lost jobs',
      ],
      caseRow('bare Fastify → 204', report.bare, '1.00', '–', false),
      caseRow('naive: raw body + HMAC + await queue.add → 202', report.naive, fixed(report.ratios.naiveVsBare, 2), '1.00'),
      caseRow('geohook buildReceiver → 202', report.geohook, fixed(report.ratios.vsBare, 2), fixed(report.ratios.vsNaive, 2)),
      caseRow(`geohook, Redis ${aof('strict')} → 202`, report.geohookStrict, '–', '–'),
    ]),
  );
  lines.push('');
  lines.push('rounds:');
  lines.push(
    ...alignedTable([
      [
        'round',
        'case',
        'req/s',
        'sustained/s',
        'drain ms',
        'p99 ms',
        'non-2xx',
        'errors',
        'RSS MiB',
        'server CPU %',
        'redis CPU %',
        'loader CPU %',
        '2xx acked',
        'jobs',
      ],
      ...report.rounds.map((round) => [
        String(round.round),
        round.case,
        thousands(round.rps),
        thousands(round.sustainedRps),
        thousands(round.drainMs),
        fixed(round.p99Ms, 1),
        String(round.non2xx),
        String(round.errors),
        fixed(round.rssMb),
        fixed(round.serverCpuPct),
        round.redisCpuPct === undefined ? '–' : fixed(round.redisCpuPct),
        fixed(round.loaderCpuPct),
        thousands(round.acked),
        round.jobs === undefined ? '–' : thousands(round.jobs),
      ]),
    ]),
  );
  const perRound = (key: RatioName): string => report.ratios.perRound.map((r) => fixed(r[key], 2)).join(', ');
  lines.push(
    `per-round geohook/bare: ${perRound('vsBare')}; geohook/naive: ${perRound('vsNaive')}; sustained geohook/naive: ${perRound('sustainedVsNaive')}; geohook-strict/geohook: ${perRound('strictVsFast')}`,
  );
  const { e2e, emulator, backfill } = report;
  lines.push('');
  lines.push(
    `end to end: ${thousands(e2e.events)} deliveries acknowledged at ${thousands(e2e.ingestPerSec)}/s; consumed ${thousands(e2e.consumed)} at ${thousands(e2e.consumedPerSec)}/s; ` +
      (e2e.drained
        ? `queues empty ${fixed(e2e.drainSeconds, 1)} s after the load stopped`
        : `queues NOT empty ${fixed(e2e.drainSeconds)} s after the load stopped`) +
      `; failed jobs ${e2e.failedJobs}`,
  );
  const cpu = e2e.cpuPerEventUs;
  const pieces: [string, number | undefined][] = [
    ['receiver', cpu.receiver],
    ['Redis', cpu.redis],
    ['consumer', cpu.consumer],
    ['load generator', cpu.loadGenerator],
  ];
  const known = pieces.filter((piece): piece is [string, number] => piece[1] !== undefined);
  if (known.length > 0) lines.push(`  CPU per event: ${known.map(([name, us]) => `${name} ${fixed(us)} µs`).join(', ')}`);
  lines.push(
    `emulator: ${thousands(emulator.received)}/${thousands(emulator.deliveries)} signed deliveries (${emulator.webhooks} webhooks × ${thousands(emulator.jobs)} GP jobs) at ${thousands(emulator.deliveriesPerSec)}/s; ` +
      `jobs fired in ${fixed(emulator.fireSeconds, 1)} s; emulator CPU ${fixed(emulator.emulatorCpuPct)} %, peak RSS ${fixed(emulator.emulatorRssMb)} MiB`,
  );
  lines.push(formatEmulatorFeatures(report.emulatorFeatures));
  lines.push(
    `backfill: ${thousands(backfill.edits)} edits made while the receiver was down were an event ${fixed(backfill.secondsAfterStart, 2)} s after it started again; ` +
      `${backfill.events} events, each edit in exactly one: ${backfill.coveredOnce ? 'yes' : 'NO'}`,
  );
  lines.push(formatChanges(report.changes));
  lines.push(formatMirror(report.mirror));
  lines.push(formatRelay(report.relay));
  lines.push(formatSubscriptions(report.subscriptions));
  lines.push(formatStreams(report.streams));
  lines.push(formatSubmissions(report.submissions));
  lines.push('');
  lines.push('targets:');
  lines.push(...formatTargets(report.targets));
  if (report.cpuProfile !== undefined) {
    lines.push('');
    lines.push('profiled with --cpu-prof (the profiler slows the process: the figures of this run are not comparable)');
    lines.push(`geohook server, ${formatFrames(report.cpuProfile.geohook).join('\n')}`);
    lines.push(`end-to-end consumer, ${formatFrames(report.cpuProfile.consumer).join('\n')}`);
    lines.push(`emulator, ${formatFrames(report.cpuProfile.emulator).join('\n')}`);
    lines.push(`geohook server resolving change events, ${formatFrames(report.cpuProfile.changes).join('\n')}`);
  }
  if (report.problems.length > 0) {
    lines.push('');
    lines.push('PROBLEMS:');
    lines.push(...report.problems.map((problem) => `  ${problem}`));
  }
  return `${lines.join('\n')}\n`;
}
