import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import type { DeliveryRecord } from '../../../src/emulator/types.js';
import { FAULTS_SECRET, WEBHOOK_PATH } from '../deliveries.js';
import { listenEmulator } from '../fault-emulator.js';
import type { FaultRow } from '../fault-row.js';
import { since, type ScenarioOptions } from '../scenario.js';
import { auditStack, startStack, withStack } from '../stack.js';

/**
 * GP jobs fired per second, before, during and after the receiver's absence. A delivery fails for good when
 * all five attempts (4 s) fall in the absence; at 10 jobs/s the 100 failures that deactivate the webhook take
 * an absence of 14 s, seven times the usual (a restart on a machine loaded by the whole test suite has taken 10 s).
 */
const JOBS_PER_SECOND = 10;
const BEFORE_MS = 2000;
/** How long the receiver stays dead before it is started again (its start-up comes on top). */
const DOWN_MS = 2000;
const AFTER_MS = 3000;
/**
 * The emulator's org settings: five attempts a second apart (the fastest the settings allow), 2 s per
 * attempt; failures never deactivate the webhook within the run.
 */
const SETTINGS = {
  notificationAttempts: '5',
  notificationElapsedTimeInSeconds: '1',
  notificationTimeOutInSeconds: '2',
  numberOfFailures: '100',
  daysInPast: '1',
};

/** A tiny admin client of the in-process emulator: form POSTs with a user's token. */
async function adminClient(
  url: string,
): Promise<(path: string, params: Record<string, string>, user?: string) => Promise<Record<string, unknown>>> {
  const tokens = new Map<string, string>();
  for (const user of ['admin', 'orgadmin']) {
    const response = await fetch(`${url}/arcgis/sharing/rest/generateToken`, {
      method: 'POST',
      body: new URLSearchParams({ username: user, password: `${user}.pass`, f: 'json' }),
    });
    tokens.set(user, ((await response.json()) as { token: string }).token);
  }
  return async (path, params, user = 'admin') => {
    const response = await fetch(`${url}/arcgis/admin/${path}`, {
      method: 'POST',
      body: new URLSearchParams({ f: 'json', token: tokens.get(user)!, ...params }),
    });
    const answer = (await response.json()) as Record<string, unknown>;
    if (answer.status === 'error') throw new Error(`emulator ${path}: ${JSON.stringify(answer)}`);
    return answer;
  };
}

/**
 * Fires GP jobs on Tools/Buffer at {@link JOBS_PER_SECOND} until `stop()`, which resolves with the count;
 * `jobOf` maps each delivery id to the job it delivers.
 */
function fireJobs(url: string): { stop: () => Promise<number>; jobOf: ReadonlyMap<string, string> } {
  let stopped = false;
  const jobOf = new Map<string, string>();
  const running = (async () => {
    const startedAtMs = performance.now();
    let fired = 0;
    while (!stopped) {
      const response = await fetch(`${url}/emulator/services/Tools/Buffer.GPServer/jobs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"outcome":"succeeded"}',
      });
      if (response.status !== 200) throw new Error(`firing a job answered ${response.status}`);
      const { jobId, deliveries } = (await response.json()) as { jobId: string; deliveries: string[] };
      for (const id of deliveries) jobOf.set(id, jobId);
      fired += 1;
      const dueMs = (fired / JOBS_PER_SECOND) * 1000 - (performance.now() - startedAtMs);
      if (dueMs > 0) await sleep(dueMs);
    }
    return fired;
  })();
  // A scenario that fails before `stop()` closes the emulator under the loop: that rejection is not news.
  running.catch(() => undefined);
  return {
    stop: async () => {
      stopped = true;
      return running;
    },
    jobOf,
  };
}

/** The `jobId` of a GP delivery's JSON body; '' when it has none. */
function gpJobIdOf(body: Buffer): string {
  try {
    const { jobId } = JSON.parse(body.toString('utf8')) as { jobId?: unknown };
    return typeof jobId === 'string' ? jobId : '';
  } catch {
    return '';
  }
}

/** Every delivery once none is pending any more (or after `timeoutMs`). */
async function settledDeliveries(emulator: FastifyInstance, timeoutMs = 60_000): Promise<DeliveryRecord[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { deliveries } = (await emulator.inject({ method: 'GET', url: '/emulator/deliveries' })).json<{ deliveries: DeliveryRecord[] }>();
    if (deliveries.every((delivery) => delivery.outcome !== 'pending') || Date.now() > deadline) return deliveries;
    await sleep(200);
  }
}

/**
 * Fault 4: the admin-API emulator (in this process) has a webhook on Tools/Buffer.GPServer pointing at the
 * receiver, signed with its key, and retries fast. GP jobs are fired throughout; the receiver is SIGKILLed,
 * jobs keep firing, and it is started again while the emulator retries. Every delivery the emulator
 * reports `delivered` must be one job in Redis (matched by the GP job id its body carries);
 * those it gave up on are reported.
 */
export async function runEmulatorRetry(options: ScenarioOptions): Promise<FaultRow> {
  return withStack(await startStack('emulator-retry', 'fast'), options.keepDirs, async (stack) => {
    const { app: emulator, url } = await listenEmulator();
    try {
      const admin = await adminClient(url);
      await admin('services/webhooks/settings', SETTINGS, 'orgadmin');
      await admin('services/Tools/Buffer.GPServer/webhooks/create', {
        name: 'faults',
        hookUrl: `${stack.receiver.url}${WEBHOOK_PATH}`,
        signatureKey: FAULTS_SECRET,
        active: 'true',
      });

      const firing = fireJobs(url);
      const startMs = performance.now();
      await sleep(BEFORE_MS);
      await stack.receiver.kill();
      const killedAtMs = since(startMs);
      options.log(`emulator-retry: receiver SIGKILLed at ${killedAtMs} ms`);
      await sleep(DOWN_MS);
      await stack.receiver.start();
      const downMs = since(startMs) - killedAtMs;
      options.log(`emulator-retry: serving again after ${downMs} ms`);
      await sleep(AFTER_MS);
      const fired = await firing.stop();
      const records = await settledDeliveries(emulator);
      options.log(`emulator-retry: ${fired} jobs fired, ${records.length} deliveries settled`);

      const problems: string[] = [];
      if (records.length !== fired)
        problems.push(`${fired} jobs fired but ${records.length} deliveries made (was the webhook deactivated?)`);
      const pending = records.filter((record) => record.outcome === 'pending').length;
      if (pending > 0) problems.push(`${pending} deliveries still pending after 60 s`);
      const gaveUp = records.filter((record) => record.outcome === 'failed').length;
      const retried = records.filter((record) => record.attempts.length > 1).length;
      const deliveries: { eventId: string; acknowledged: boolean }[] = [];
      return auditStack(stack, {
        deliveries,
        zeroLossExpected: true,
        notes: [`${retried} retried`, `${gaveUp} given up`, `receiver down ${(downMs / 1000).toFixed(1)} s`],
        problems,
        extra: { gaveUp, retried },
        // A delivery's body is not in its record, but the GP job it delivers is known from firing it, and is in the body.
        onJobs: (jobs) => {
          const eventIdByJob = new Map(
            jobs.filter((job) => job.rawBody !== undefined).map((job) => [gpJobIdOf(job.rawBody!), job.eventId ?? '']),
          );
          for (const record of records) {
            const eventId = eventIdByJob.get(firing.jobOf.get(record.id) ?? '') ?? `not stored: delivery ${record.id}`;
            deliveries.push({ eventId, acknowledged: record.outcome === 'delivered' });
          }
        },
      });
    } finally {
      await emulator.close();
    }
  });
}
