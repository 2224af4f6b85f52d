import { parseArgs } from 'node:util';
import type { Durability } from './redis.js';

/** What one bench run does. */
export interface BenchOptions {
  quick: boolean;
  json: boolean;
  durability: Durability;
  /** Rounds of the four HTTP cases, taken in turns (a, b, c, d, a, b, c, d…). */
  rounds: number;
  /** Measured seconds per case and round. */
  durationSeconds: number;
  /** Unmeasured seconds of load before each measurement (JIT, connection pools). */
  warmupSeconds: number;
  connections: number;
  /** Deliveries pushed through geohook while a consumer drains them. */
  e2eEvents: number;
  /** Signed deliveries the emulator fires at a sink. */
  emulatorDeliveries: number;
  /** Webhooks on the GP service: each fired job is delivered to all of them. */
  emulatorWebhooks: number;
  /** Edits made on a registered feature service while the receiver is down, backfilled when it is back. */
  backfillEdits: number;
  /** Features the emulator's feature store adds in one generation and reads back with extractChanges. */
  emulatorFeatures: number;
  /** Run only the emulator's feature-store section. */
  features: boolean;
  /** Parcels geohook resolves into change events in one generation. */
  changesFeatures: number;
  /** Single edits timed to their change event. */
  changesEdits: number;
  /** Run only the change-events section. */
  changes: boolean;
  /** Events queued for a relay route and timed draining to a local sink. */
  relayEvents: number;
  /** Run only the relay section. */
  relay: boolean;
  /** Events stored at once and timed through each stream lane (NATS JetStream, RabbitMQ) and a bare producer. */
  streamEvents: number;
  /** Run only the streams section. */
  streams: boolean;
  /** Events in the log the fan-out hands to 16 subscriptions, timed; as many (10 s at most) at 1,000/s timed to the last queue. */
  subscriptionEvents: number;
  /** Run only the subscriptions section. */
  subscriptions: boolean;
  /** Submissions timed to their change.submission, closed by their Survey123 webhook, then as many by their window. */
  submissionCount: number;
  /** Run only the submissions section. */
  submissions: boolean;
  /** Parcels the mirror copies into PostGIS at start. */
  mirrorFeatures: number;
  /** Single edits timed to their mirrored row. */
  mirrorEdits: number;
  /** Run only the mirror section. */
  mirror: boolean;
  /** Run only the scale section (a large organization: registration, recovery, dedup memory, backfill bytes). */
  scale: boolean;
  /** Services of the scale section's registration; half as many deactivated in its recovery. */
  scaleServices: number;
  /** Profile the geohook case's server, the end-to-end consumer, the emulator and the change events' server (`--cpu-prof`) and print their top frames. */
  cpuProf: boolean;
}

export const usage = `npm run bench -- [options]

  --scale                 only the scale section (a large organization; a few minutes): readiness and a pass of
                          1,000 services behind a slow admin API, recovery of 500 deactivated webhooks, dedup
                          memory per consumed event, backfill bytes per point edit
  --scale-services N      services the scale section registers (default 1000); half as many recover,
                          20 events per service measure the dedup memory
  --quick                 short run (3 rounds × 2 s after 0.5 s of warm-up, e2e 10,000, emulator 4,000), under a minute
  --json                  print one JSON object on stdout (progress goes to stderr)
  --durability MODE       fast (AOF, fsync every second; default) or strict (fsync at every write);
                          the geohook-strict case always fsyncs at every write
  --rounds N              rounds of the four HTTP cases (default 3)
  --duration SECONDS      measured seconds per case and round (default 10)
  --warmup SECONDS        unmeasured load before each measurement (default 2; quick 0.5)
  --connections N         concurrent connections of the load generator (default 64)
  --e2e-events N          deliveries of the end-to-end run (default 100000)
  --emulator-deliveries N signed deliveries fired by the emulator (default 20000)
  --emulator-webhooks N   webhooks on the GP service, each fired job goes to all (default 20)
  --backfill-edits N      edits missed while the receiver is down, backfilled when it is back (default 1000)
  --emulator-features N   Parcels the emulator adds in one generation (bulk), then reads back with an
                          asynchronous extractChanges; its peak RSS is reported (default 100000; quick 10000)
  --features              only that feature-store section (seconds)
  --changes-features N    Parcels added in one generation that geohook's server (CHANGES on Parcels) resolves
                          into change events, against the floor (the same change file fetched, parsed and added
                          to a queue); before it, single edits at 20/s timed to their event in a consumer
                          (default 100000; quick 10000)
  --changes-edits N       the single edits of that section (default 200; quick 50)
  --changes               only that change-events section (under a minute)
  --relay-events N        events queued for a relay route, timed draining to a local sink (default 20000; quick 5000)
  --relay                 only the relay section: deliveries/s, against a worker awaiting one fetch per event, and
                          change event to sink at 500 events/s (under a minute)
  --stream-events N       events of each burst, stored at once and timed through a stream lane into a private
                          nats-server -js and a RabbitMQ quorum queue, five bursts alternated with as many of a bare
                          producer (default 20000; quick 3000); then as many
                          (at most 10 s; quick 3 s) stored at 1,000/s, timed to their acknowledged publish
  --streams               only the streams section: events/s of each lane against the bare producer, and stored
                          event to acknowledged publish at 1,000 events/s (a few minutes; quick about a minute)
  --subscription-events N events in the log, handed to 16 subscriptions by the fan-out and timed (default 20000;
                          quick 5000); as many deliveries (at most 10 s; quick 3 s) at 1,000/s timed from their 202 to
                          the last subscription's queue
  --subscriptions         only the subscriptions section: deliveries/s acknowledged by geohook's server with 0 and with
                          16 subscriptions in turns (--rounds, --duration, --warmup), the fan-out's rate, the latency
                          (about two minutes; quick under a minute)
  --submission-count N    submissions (a parcel, 2 inspections, 4 photos) at 5/s timed from their last edit to their
                          change.submission in a consumer, each followed by its Survey123 webhook, then as many closed
                          by the 3-s window (default 100; quick 20)
  --submissions           only that submissions section (about a minute; quick under a minute)
  --mirror-features N     Parcels geohook's server (MIRROR on Parcels) copies into a PostgreSQL of its own, against a
                          bare COPY of the same rows; then single edits timed to their row committed
                          (default 100000; quick 10000)
  --mirror-edits N        the single edits of that section (default 200; quick 50)
  --mirror                only that mirror section (about a minute)
  --cpu-prof              profile geohook's server, the end-to-end consumer, the emulator and geohook's server of the
                          change events (bench-profiles/), print their top 15 frames
  --help`;

function whole(name: string, text: string | undefined, fallback: number, min: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < min) throw new Error(`--${name}: a whole number from ${min}, got "${text}"`);
  return value;
}

function seconds(name: string, text: string | undefined, fallback: number, min: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value < min) throw new Error(`--${name}: a number of seconds from ${min}, got "${text}"`);
  return value;
}

/** Parses the command line; throws an Error whose message names the bad flag. Undefined means `--help`. */
export function parseOptions(argv: readonly string[]): BenchOptions | undefined {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    options: {
      quick: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      durability: { type: 'string' },
      rounds: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      'e2e-events': { type: 'string' },
      'emulator-deliveries': { type: 'string' },
      'emulator-webhooks': { type: 'string' },
      'backfill-edits': { type: 'string' },
      'emulator-features': { type: 'string' },
      features: { type: 'boolean', default: false },
      'changes-features': { type: 'string' },
      'changes-edits': { type: 'string' },
      changes: { type: 'boolean', default: false },
      'relay-events': { type: 'string' },
      relay: { type: 'boolean', default: false },
      'stream-events': { type: 'string' },
      streams: { type: 'boolean', default: false },
      'subscription-events': { type: 'string' },
      subscriptions: { type: 'boolean', default: false },
      'submission-count': { type: 'string' },
      submissions: { type: 'boolean', default: false },
      'mirror-features': { type: 'string' },
      'mirror-edits': { type: 'string' },
      mirror: { type: 'boolean', default: false },
      'cpu-prof': { type: 'boolean', default: false },
      scale: { type: 'boolean', default: false },
      'scale-services': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return undefined;
  const durability = values.durability ?? 'fast';
  if (durability !== 'fast' && durability !== 'strict') throw new Error(`--durability: fast or strict, got "${durability}"`);
  const quick = values.quick;
  return {
    quick,
    json: values.json,
    durability,
    rounds: whole('rounds', values.rounds, 3, 1),
    durationSeconds: seconds('duration', values.duration, quick ? 2 : 10, 1),
    warmupSeconds: seconds('warmup', values.warmup, quick ? 0.5 : 2, 0),
    connections: whole('connections', values.connections, 64, 1),
    e2eEvents: whole('e2e-events', values['e2e-events'], quick ? 10_000 : 100_000, 100),
    emulatorDeliveries: whole('emulator-deliveries', values['emulator-deliveries'], quick ? 4_000 : 20_000, 1),
    emulatorWebhooks: whole('emulator-webhooks', values['emulator-webhooks'], 20, 1),
    backfillEdits: whole('backfill-edits', values['backfill-edits'], 1000, 1),
    emulatorFeatures: whole('emulator-features', values['emulator-features'], quick ? 10_000 : 100_000, 1),
    features: values.features,
    changesFeatures: whole('changes-features', values['changes-features'], quick ? 10_000 : 100_000, 1),
    changesEdits: whole('changes-edits', values['changes-edits'], quick ? 50 : 200, 10),
    changes: values.changes,
    relayEvents: whole('relay-events', values['relay-events'], quick ? 5000 : 20_000, 100),
    relay: values.relay,
    streamEvents: whole('stream-events', values['stream-events'], quick ? 3000 : 20_000, 100),
    streams: values.streams,
    subscriptionEvents: whole('subscription-events', values['subscription-events'], quick ? 5000 : 20_000, 100),
    subscriptions: values.subscriptions,
    submissionCount: whole('submission-count', values['submission-count'], quick ? 20 : 100, 1),
    submissions: values.submissions,
    mirrorFeatures: whole('mirror-features', values['mirror-features'], quick ? 10_000 : 100_000, 1),
    mirrorEdits: whole('mirror-edits', values['mirror-edits'], quick ? 50 : 200, 1),
    mirror: values.mirror,
    cpuProf: values['cpu-prof'],
    scale: values.scale,
    scaleServices: whole('scale-services', values['scale-services'], 1000, 2),
  };
}
