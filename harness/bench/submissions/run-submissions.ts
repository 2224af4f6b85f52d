import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { findFreePort } from '../../../src/embedded/redis-server.js';
import { makeTempDir, removeTempDir } from '../../cleanup.js';
import { emulatorAdminEnv, submitInspection } from '../../emulator-control.js';
import { percentile } from '../changes/change-latency.js';
import { Child } from '../ipc.js';
import { startRedis } from '../redis.js';
import { untilReady } from '../until-ready.js';

/** One way a submission closes, timed from just before its submission to its `change.submission` in a consumer. */
export interface SubmissionLatency {
  /** Submissions made, and those whose `change.submission` the consumer was handed with the expected `closedBy`. */
  submissions: number;
  received: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** What `npm run bench -- --submissions` prints under `submissions`. */
export interface SubmissionsResult {
  /** Submissions made per second in each run. */
  perSec: number;
  /** The service's `submissionWindowMs`. */
  windowMs: number;
  /** Each submission followed by its Survey123 webhook (inside the timed call). */
  survey123: SubmissionLatency;
  /** No webhook: each closes once its window passed. */
  window: SubmissionLatency;
}

export interface SubmissionsSettings {
  /** Submissions timed in each run (with the webhook, then without). */
  submissions: number;
  perSec: number;
}

const PREFIX = 'bench-submissions';
const SERVICE = 'Hosted/Parcels.FeatureServer';
/** The default window (docs/submissions.md). */
const WINDOW_MS = 3000;
/** A parcel, two inspections, two photos on the parcel and one on each inspection. */
const SUBMISSION = { related: 2, photos: [{}, {}, { on: 0 }, { on: 1 }], photoBytes: 2048 };

/**
 * `settings.submissions` submissions at a steady pace, each timed from just before the emulator's `submissions` control
 * (its one `applyEdits` is the submission's last edit; with `webhookUrl` the Survey123 webhook follows inside the same
 * call) to the moment `consumer` was handed its `change.submission` closed by `closedBy`.
 */
async function timeSubmissions(
  root: string,
  consumer: Child,
  settings: SubmissionsSettings,
  closedBy: 'survey123' | 'window',
  webhookUrl: string | undefined,
): Promise<SubmissionLatency> {
  const sentAtMs = new Map<string, number>();
  const calls: Promise<void>[] = [];
  const startedAtMs = Date.now();
  for (let n = 0; n < settings.submissions; n += 1) {
    await sleep(Math.max(0, startedAtMs + (n * 1000) / settings.perSec - Date.now()));
    const atMs = Date.now();
    calls.push(
      submitInspection(root, SERVICE, { ...SUBMISSION, ...(webhookUrl === undefined ? {} : { webhookUrl }) }).then((answer) => {
        sentAtMs.set(answer.parent.globalId, atMs);
      }),
    );
  }
  await Promise.all(calls);
  const deadline = Date.now() + WINDOW_MS + 60_000;
  let receipts: Record<string, { atMs: number; closedBy: string }>;
  for (;;) {
    receipts = await consumer.call<Record<string, { atMs: number; closedBy: string }>>('receipts');
    if ([...sentAtMs.keys()].every((id) => receipts[id] !== undefined) || Date.now() > deadline) break;
    await sleep(100);
  }
  const latencies = [...sentAtMs]
    .flatMap(([id, atMs]) => (receipts[id]?.closedBy === closedBy ? [receipts[id].atMs - atMs] : []))
    .sort((a, b) => a - b);
  return {
    submissions: settings.submissions,
    received: latencies.length,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    maxMs: latencies.at(-1) ?? Number.NaN,
  };
}

/**
 * Submissions from their last edit to their `change.submission`: geohook's server (`startServer`, CHANGES on Parcels
 * with `attachments: "metadata"` and the default window, the emulator as its portal) in a process of its own beside
 * the emulator and a `change.submission` consumer; first submissions each followed by its Survey123 webhook, then as
 * many without, which close by their window.
 */
export async function runSubmissions(settings: SubmissionsSettings, log: (line: string) => void): Promise<SubmissionsResult> {
  const redis = await startRedis('fast');
  const emulator = await Child.start<{ port: number }>('emulator', 'workers/emulator.js');
  const configDir = makeTempDir('bench-submissions');
  let server: Child<{ url: string }> | undefined;
  let consumer: Child | undefined;
  try {
    const root = `http://127.0.0.1:${emulator.ready.port}`;
    const config = join(configDir, 'geohook.json');
    writeFileSync(config, JSON.stringify({ changes: { [SERVICE]: { attachments: 'metadata', submissionWindowMs: WINDOW_MS } } }));
    const env = {
      REDIS_URL: redis.url,
      HOST: '127.0.0.1',
      PORT: String(await findFreePort()),
      ...emulatorAdminEnv(root),
      REGISTER: SERVICE,
      CHANGES: SERVICE,
      PORTAL_URL: `${root}/arcgis`,
      GEOHOOK_CONFIG: config,
      GEOHOOK_PREFIX: PREFIX,
      LOG_LEVEL: 'silent',
    };
    server = await Child.start<{ url: string }>('geohook server', 'workers/geohook-server.js', { args: [JSON.stringify(env)] });
    await untilReady(server.ready.url, 60_000, 'submissions');
    consumer = await Child.start('submission consumer', 'workers/submission-consumer.js', {
      args: [JSON.stringify({ redisUrl: redis.url, prefix: PREFIX })],
    });
    log(`submissions: ${settings.submissions} at ${settings.perSec}/s, each followed by its Survey123 webhook`);
    const survey123 = await timeSubmissions(root, consumer, settings, 'survey123', `${server.ready.url}/webhooks/default/survey123`);
    log(`submissions: ${settings.submissions} at ${settings.perSec}/s without a webhook, closed by their ${WINDOW_MS}-ms window`);
    const window = await timeSubmissions(root, consumer, settings, 'window', undefined);
    return { perSec: settings.perSec, windowMs: WINDOW_MS, survey123, window };
  } finally {
    await consumer?.close();
    await server?.close();
    await emulator.close();
    await redis.stop();
    removeTempDir(configDir);
  }
}
