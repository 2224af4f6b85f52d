import { execFileSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { cleanUp, startTool } from '../cleanup.js';
import { runBackfillAfterOutage, type BackfillResult } from './backfill-outage.js';
import { GEOHOOK_LOG_LEVEL } from './cases/case-names.js';
import { mainChanges, measureChanges } from './changes/changes-section.js';
import type { ChangesResult } from './changes/run-changes.js';
import { runEmulatorFanOut, type EmulatorResult } from './emulator-fanout.js';
import { runEmulatorFeatures, type EmulatorFeaturesResult } from './emulator-features.js';
import { runEndToEnd, type EndToEndResult } from './end-to-end.js';
import { caseSpecs, runCaseRound, type RoundResult } from './http-cases.js';
import { Child } from './ipc.js';
import { mainMirror, measureMirror } from './mirror/mirror-section.js';
import type { MirrorResult } from './mirror/run-mirror.js';
import { parseOptions, usage, type BenchOptions } from './options.js';
import { BODY_BYTES } from './payloads.js';
import { profileFiles, topFrames } from './profile/top-frames.js';
import { mainRelay, measureRelay } from './relay/relay-section.js';
import type { RelayResult } from './relay/run-relay.js';
import { evaluateTargets, formatEmulatorFeatures, formatReport, perRoundRatios, summarizeCase, type BenchReport } from './report.js';
import { formatScale, runScale } from './scale/run-scale.js';
import type { StreamsResult } from './streams/run-streams.js';
import { mainStreams, measureStreams } from './streams/streams-section.js';
import type { SubmissionsResult } from './submissions/run-submissions.js';
import { mainSubmissions, measureSubmissions } from './submissions/submissions-section.js';
import type { SubscriptionsResult } from './subscriptions/run-subscriptions.js';
import { mainSubscriptions, measureSubscriptions } from './subscriptions/subscriptions-section.js';

/**
 * `npm run bench`: in one run, bare Fastify, the naive receiver, geohook's receiver and geohook's receiver
 * on a Redis that fsyncs at every write, in turns under the same load, then geohook end to end with a
 * consumer, then the emulator's fan-out and feature store, the backfill after an outage, change events, the mirror,
 * relays, subscriptions, streams and submissions. Every piece runs in a process of its own; progress goes to stderr, the report (table or
 * `--json`) to stdout.
 */

const log = (line: string): void => {
  process.stderr.write(`bench: ${line}\n`);
};

/** Bodies the loader precomputes: enough for the e2e run and for a distinct-body case at 20k req/s. */
const poolSizeFor = (options: BenchOptions): number =>
  Math.max(options.e2eEvents, Math.ceil((options.warmupSeconds + options.durationSeconds + 1) * 20_000));

function redisVersion(): string {
  try {
    return /v=(\S+)/.exec(execFileSync('redis-server', ['--version'], { encoding: 'utf8' }))?.[1] ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/** Checks one case round; correctness failures go to `problems` (and are shouted at once). */
function checkRound(result: RoundResult, problems: string[]): void {
  const where = `round ${result.round} ${result.case}`;
  if (!(result.rps > 0)) problems.push(`${where}: no 2xx answer at all`);
  if (result.jobs !== undefined && result.jobs !== result.acked) {
    const difference = result.acked - result.jobs;
    problems.push(
      `${where}: ${result.acked} deliveries answered 2xx but ${result.jobs} jobs in Redis (${difference > 0 ? `${difference} LOST` : `${-difference} extra`})`,
    );
  }
  if (result.jobs !== undefined && result.jobs < result.received2xx) {
    problems.push(`${where}: the load generator received ${result.received2xx} 2xx answers but Redis holds ${result.jobs} jobs (LOST)`);
  }
  if (result.signedOnTheFly > 0)
    log(
      `warning: ${where}: the body pool ran out; ${result.signedOnTheFly} bodies were signed during the load (loader busier than it should be)`,
    );
}

function checkEndToEnd(e2e: EndToEndResult, problems: string[]): void {
  if (e2e.acked !== e2e.events)
    problems.push(
      `e2e: ${e2e.events - e2e.acked} of ${e2e.events} deliveries not answered 2xx (${e2e.non2xx} non-2xx, ${e2e.errors} errors)`,
    );
  if (!e2e.drained)
    problems.push(`e2e: queues not empty ${Math.round(e2e.drainSeconds)} s after the load (${e2e.consumed} of ${e2e.acked} consumed)`);
  if (e2e.consumed > e2e.acked) problems.push(`e2e: ${e2e.consumed} events consumed for ${e2e.acked} acknowledged`);
  if (e2e.failedJobs > 0) problems.push(`e2e: ${e2e.failedJobs} jobs failed with a no-op handler`);
}

function checkEmulator(emulator: EmulatorResult, problems: string[]): void {
  if (emulator.received !== emulator.deliveries)
    problems.push(`emulator: the sink received ${emulator.received} of ${emulator.deliveries} deliveries`);
  if (emulator.signed !== emulator.received) problems.push(`emulator: ${emulator.received - emulator.signed} deliveries arrived unsigned`);
}

/** The emulator's feature store: every feature added must come back in the extractChanges result. */
async function measureFeatures(count: number, problems: string[]): Promise<EmulatorFeaturesResult> {
  log(`emulator features: bulk of ${count.toLocaleString('en-US')} Parcels, then an asynchronous extractChanges of them`);
  const result = await runEmulatorFeatures(count);
  if (result.resultRows !== result.features)
    problems.push(`emulator features: extractChanges gave ${result.resultRows} of ${result.features} rows`);
  return result;
}

/** `--features`: the emulator's feature-store section alone; `{ emulatorFeatures }` with `--json`. */
async function mainFeatures(options: BenchOptions): Promise<number> {
  const problems: string[] = [];
  const emulatorFeatures = await measureFeatures(options.emulatorFeatures, problems);
  for (const problem of problems) log(`PROBLEM: ${problem}`);
  process.stdout.write(options.json ? `${JSON.stringify({ emulatorFeatures })}\n` : `${formatEmulatorFeatures(emulatorFeatures)}\n`);
  return problems.length > 0 ? 1 : 0;
}

/** `os.loadavg()`, with a warning when the machine is already busy. */
function warnIfBusy(): number[] {
  const load = loadavg();
  if (load[0]! > 0.5)
    log(`warning: the machine is already busy (load average ${load.map((n) => n.toFixed(2)).join(', ')}): figures will be noisy`);
  return load;
}

/** A fresh folder under bench-profiles/ for the `--cpu-prof` profiles of one run. */
const newProfileDir = (): string => resolve('bench-profiles', new Date().toISOString().replace(/[:.]/g, '-'));

/** `--scale`: the scale section alone; `{ scale }` with `--json`. */
async function mainScale(options: BenchOptions): Promise<number> {
  const services = options.scaleServices;
  const scale = await runScale(
    {
      registrationServices: services,
      recoveryServices: Math.ceil(services / 2),
      dedupEvents: services * 20,
      backfillEdits: options.backfillEdits,
    },
    log,
  );
  const missed = scale.targets.filter((target) => !target.met);
  for (const target of missed) log(`target not met: ${target.name}: ${target.value} (goal ${target.goal})`);
  process.stdout.write(options.json ? `${JSON.stringify({ scale })}\n` : formatScale(scale));
  return 0;
}

async function main(): Promise<number> {
  const options = await startTool(parseOptions, usage, log);
  if (typeof options === 'number') return options;
  if (options.scale) return mainScale(options);
  if (options.features) return mainFeatures(options);
  if (options.relay) {
    warnIfBusy();
    return mainRelay(options, log);
  }
  if (options.streams) {
    warnIfBusy();
    return mainStreams(options, log);
  }
  if (options.subscriptions) {
    warnIfBusy();
    return mainSubscriptions(options, log);
  }
  if (options.submissions) {
    warnIfBusy();
    return mainSubmissions(options, log);
  }
  if (options.mirror) {
    warnIfBusy();
    return mainMirror(options, log);
  }
  if (options.changes) {
    warnIfBusy();
    return mainChanges(options, options.cpuProf ? newProfileDir() : undefined, log);
  }
  const startedAtMs = Date.now();
  const loadBefore = warnIfBusy();
  const profileDir = options.cpuProf ? newProfileDir() : undefined;
  const problems: string[] = [];
  const rounds: RoundResult[] = [];

  const poolSize = poolSizeFor(options);
  log(`signing ${poolSize.toLocaleString('en-US')} distinct ${BODY_BYTES}-byte bodies in the load generator`);
  const loader = await Child.start('loader', 'workers/loader.js', { args: [String(poolSize)], readyTimeoutMs: 300_000 });
  let e2e: EndToEndResult;
  let emulator: EmulatorResult;
  let emulatorFeatures: EmulatorFeaturesResult;
  let backfill: BackfillResult;
  let changes: ChangesResult;
  let mirror: MirrorResult;
  let relay: RelayResult;
  let subscriptions: SubscriptionsResult;
  let streams: StreamsResult;
  let submissions: SubmissionsResult;
  try {
    for (let round = 1; round <= options.rounds; round += 1) {
      for (const spec of caseSpecs) {
        const execArgv =
          spec.name === 'geohook' && profileDir !== undefined ? ['--cpu-prof', '--cpu-prof-dir', join(profileDir, 'geohook')] : [];
        const result = await runCaseRound(spec, loader, { ...options, round, execArgv });
        rounds.push(result);
        log(
          `round ${round}/${options.rounds} ${spec.name}: ${Math.round(result.rps)} req/s, p99 ${result.p99Ms} ms, RSS ${Math.round(result.rssMb)} MiB` +
            (result.jobs === undefined ? '' : `, ${result.acked} acked / ${result.jobs} jobs`),
        );
        checkRound(result, problems);
      }
    }
    log(`end to end: ${options.e2eEvents.toLocaleString('en-US')} deliveries into geohook while a consumer drains them`);
    e2e = await runEndToEnd(
      loader,
      {
        events: options.e2eEvents,
        connections: options.connections,
        durability: options.durability,
        concurrency: 50,
        drainTimeoutMs: Math.max(60_000, options.e2eEvents),
        ...(profileDir === undefined ? {} : { consumerExecArgv: ['--cpu-prof', '--cpu-prof-dir', join(profileDir, 'consumer')] }),
      },
      log,
    );
    checkEndToEnd(e2e, problems);
    log(`emulator: ${options.emulatorDeliveries.toLocaleString('en-US')} signed deliveries to a bare sink`);
    emulator = await runEmulatorFanOut({
      deliveries: options.emulatorDeliveries,
      webhooks: options.emulatorWebhooks,
      fireConcurrency: 8,
      timeoutMs: 120_000,
      ...(profileDir === undefined ? {} : { execArgv: ['--cpu-prof', '--cpu-prof-dir', join(profileDir, 'emulator')] }),
    });
    checkEmulator(emulator, problems);
    emulatorFeatures = await measureFeatures(options.emulatorFeatures, problems);
    log(`backfill: ${options.backfillEdits.toLocaleString('en-US')} edits while the receiver is down, then it starts again`);
    backfill = await runBackfillAfterOutage({ edits: options.backfillEdits, timeoutMs: 120_000 });
    if (!backfill.coveredOnce) problems.push('backfill: an edit missed during the outage is not in exactly one event');
    changes = await measureChanges(options, problems, profileDir, log);
    mirror = await measureMirror(options, log);
    relay = await measureRelay(options, log);
    subscriptions = await measureSubscriptions(options, loader, problems, log);
    streams = await measureStreams(options, log);
    submissions = await measureSubmissions(options, problems, log);
  } finally {
    await loader.close();
  }

  const partial = {
    durability: options.durability,
    settings: {
      quick: options.quick,
      rounds: options.rounds,
      durationSeconds: options.durationSeconds,
      warmupSeconds: options.warmupSeconds,
      connections: options.connections,
      bodyBytes: BODY_BYTES,
      e2eEvents: options.e2eEvents,
      e2eConsumerConcurrency: 50,
      emulatorDeliveries: emulator.deliveries,
      emulatorWebhooks: options.emulatorWebhooks,
      geohookLogLevel: GEOHOOK_LOG_LEVEL,
      cpuProf: options.cpuProf,
      node: process.version,
      redis: redisVersion(),
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? 'unknown',
      loadAverageBefore: loadBefore,
      loadAverageAfter: loadavg(),
      elapsedSeconds: (Date.now() - startedAtMs) / 1000,
    },
    bare: summarizeCase(rounds, 'bare'),
    naive: summarizeCase(rounds, 'naive'),
    geohook: summarizeCase(rounds, 'geohook'),
    geohookStrict: summarizeCase(rounds, 'geohook-strict'),
    ratios: perRoundRatios(rounds),
    rounds,
    e2e,
    emulator,
    emulatorFeatures,
    backfill,
    changes,
    mirror,
    relay,
    subscriptions,
    streams,
    submissions,
    ...(profileDir === undefined
      ? {}
      : {
          cpuProfile: {
            geohook: topFrames(profileFiles([join(profileDir, 'geohook')]), 15),
            consumer: topFrames(profileFiles([join(profileDir, 'consumer')]), 15),
            emulator: topFrames(profileFiles([join(profileDir, 'emulator')]), 15),
            changes: topFrames(profileFiles([join(profileDir, 'changes')]), 15),
          },
        }),
  };
  const report: BenchReport = { ...partial, targets: evaluateTargets(partial), problems };
  for (const problem of problems) log(`PROBLEM: ${problem}`);
  if (profileDir !== undefined)
    log(`CPU profiles (geohook server, end-to-end consumer, emulator, geohook server of the change events): ${profileDir}`);
  process.stdout.write(options.json ? `${JSON.stringify(report)}\n` : formatReport(report));
  return problems.length > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    log(`failed: ${(err as Error).stack ?? String(err)}`);
    void cleanUp().finally(() => process.exit(1));
  },
);
