import { alignedTable } from '../table.js';
import type { Target } from '../targets.js';
import { measureBackfillBytes } from './backfill-bytes.js';
import { measureDedupBytes } from './dedup-memory.js';
import { measureRecovery } from './recovery.js';
import { measureRegistration, type RegistrationResult } from './registration.js';

/** What `npm run bench -- --scale` prints under `scale`: a large organization's figures, and the goals they meet. */
export interface ScaleReport {
  /** `/readyz` 200 after start-up, 1,000 services, 50 ms per admin request. */
  readySeconds: number;
  /** One health pass, 1,000 services, 100 ms per admin request. */
  passSeconds: number;
  /** From the restart to every webhook of 500 deactivated services recovered, each gap 200 ms to extract. */
  recoverySeconds: number;
  /** Redis commands geohook sent during that recovery, per service (a script call counts one). */
  recoveryRedisOps: number;
  /** Every command Redis processed then, per service, those scripts run included. */
  recoveryRedisCommandsTotal: number;
  /** Redis memory an event keeps once consumed, for the dedup window (a feature event with tracked ranges). */
  bytesPerConsumedEvent: number;
  /** The same for an event without ranges (a GP job, a feature service without change tracking). */
  bytesPerConsumedEventUnranged: number;
  /** Bytes of `extractChanges` answers a backfill reads per point edit of its gap. */
  backfillBytesPerEdit: number;
  registration: RegistrationResult;
  targets: Target[];
  elapsedSeconds: number;
}

/** The sizes of the scale section. */
export interface ScaleSettings {
  registrationServices: number;
  recoveryServices: number;
  dedupEvents: number;
  backfillEdits: number;
}

const goal = (name: string, value: number, limit: number, unit: string): Target => ({
  name,
  goal: `≤ ${limit}${unit}`,
  value: `${Number(value.toFixed(2))}${unit}`,
  met: value <= limit,
});

/** Runs each measure in turn, each on its own Redis and emulator. */
export async function runScale(settings: ScaleSettings, log: (line: string) => void): Promise<ScaleReport> {
  const startedAt = Date.now();
  log(`scale: registration of ${settings.registrationServices} services, 50 ms per admin request, then a pass at 100 ms`);
  const registration = await measureRegistration({
    services: settings.registrationServices,
    readyLatencyMs: 50,
    passLatencyMs: 100,
    timeoutMs: 15 * 60_000,
  });
  log(`scale: ready in ${registration.readySeconds} s, a pass in ${registration.passSeconds} s`);
  log(`scale: recovery of ${settings.recoveryServices} deactivated webhooks, each gap 200 ms to extract`);
  const recovery = await measureRecovery({ services: settings.recoveryServices, extractDelayMs: 200 });
  log(`scale: recovered in ${recovery.recoverySeconds} s, ${recovery.recoveryRedisOps} Redis commands per service`);
  log(`scale: dedup memory of ${settings.dedupEvents} consumed events`);
  const dedup = await measureDedupBytes({ events: settings.dedupEvents });
  log(`scale: backfill of ${settings.backfillEdits} point edits`);
  const backfill = await measureBackfillBytes({ edits: settings.backfillEdits });
  const report = {
    readySeconds: registration.readySeconds,
    passSeconds: registration.passSeconds,
    recoverySeconds: recovery.recoverySeconds,
    recoveryRedisOps: recovery.recoveryRedisOps,
    recoveryRedisCommandsTotal: recovery.recoveryRedisCommandsTotal,
    bytesPerConsumedEvent: dedup.bytesPerConsumedEvent,
    bytesPerConsumedEventUnranged: dedup.bytesPerConsumedEventUnranged,
    backfillBytesPerEdit: backfill.backfillBytesPerEdit,
    registration,
  };
  return {
    ...report,
    targets: [
      goal(`ready, ${registration.services} services at 50 ms`, report.readySeconds, 30, ' s'),
      goal(`one pass, ${registration.services} services at 100 ms`, report.passSeconds, 60, ' s'),
      goal(`recovery, ${settings.recoveryServices} services, 200-ms gaps`, report.recoverySeconds, 15, ' s'),
      goal('recovery Redis commands per service', report.recoveryRedisOps, 20, ''),
      goal('bytes per consumed event (dedup window)', report.bytesPerConsumedEvent, 80, ' B'),
      goal('backfill bytes per point edit', report.backfillBytesPerEdit, 30, ' B'),
    ],
    elapsedSeconds: (Date.now() - startedAt) / 1000,
  };
}

/** The scale section as text: the figures against their goals. */
export function formatScale(scale: ScaleReport): string {
  const rows = [
    ['scale target', 'goal', 'measured', 'met'],
    ...scale.targets.map((target) => [target.name, target.goal, target.value, target.met ? 'yes' : 'NO']),
  ];
  const { registration } = scale;
  return [
    ...alignedTable(rows),
    '',
    `registration: ${registration.readyRequestsPerService.toFixed(1)} admin/REST requests per service until ready, ` +
      `${registration.passRequestsPerService.toFixed(1)} per service in a pass, ${registration.concurrency} services at once`,
    `recovery: ${scale.recoveryRedisCommandsTotal.toFixed(0)} commands per service processed by Redis, those scripts run included`,
    `an event without ranges keeps ${scale.bytesPerConsumedEventUnranged.toFixed(0)} B for the dedup window`,
    `elapsed ${scale.elapsedSeconds.toFixed(0)} s`,
    '',
  ].join('\n');
}
