import type { Child } from '../ipc.js';

/** From a single edit to its change event handed to a consumer. */
export interface LatencyResult {
  /** Edits measured (after the warm-up), one add each, and their events the consumer was handed. */
  edits: number;
  received: number;
  editsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface LatencySettings {
  edits: number;
  /** Edits made first at the same pace, not measured. */
  warmupEdits: number;
  editsPerSec: number;
  /** Longest wait for the last events after the last edit. */
  timeoutMs: number;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The value at `share` of `sorted` (nearest rank): `percentile(sorted, 0.99)` is the p99. */
export function percentile(sorted: readonly number[], share: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(share * sorted.length) - 1))]!;
}

/** One add to Parcels through the emulator's control `applyEdits`: one generation, the webhooks fired once. */
async function addParcel(root: string, parcelId: string): Promise<void> {
  const response = await fetch(`${root}/emulator/services/Hosted/Parcels.FeatureServer/applyEdits`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ edits: [{ id: 0, adds: [{ attributes: { parcel_id: parcelId } }] }] }),
  });
  if (response.status !== 200) throw new Error(`changes: applyEdits answered HTTP ${response.status}`);
}

/**
 * Single edits at a steady pace (each an add with its own `parcel_id`), timed from just before the control
 * `applyEdits` to the moment `consumer` (workers/change-consumer.js) was handed its change event.
 */
export async function measureLatency(root: string, consumer: Child, settings: LatencySettings): Promise<LatencyResult> {
  const sentAtMs = new Map<string, number>();
  const intervalMs = 1000 / settings.editsPerSec;
  const startedAtMs = Date.now();
  for (let n = 0; n < settings.warmupEdits + settings.edits; n += 1) {
    const waitMs = startedAtMs + n * intervalMs - Date.now();
    if (waitMs > 0) await sleep(waitMs);
    const measured = n >= settings.warmupEdits;
    const parcelId = measured ? `L-${n}` : `W-${n}`;
    if (measured) sentAtMs.set(parcelId, Date.now());
    await addParcel(root, parcelId);
  }
  const deadline = Date.now() + settings.timeoutMs;
  let receipts: Record<string, number>;
  for (;;) {
    receipts = await consumer.call<Record<string, number>>('receipts');
    if ([...sentAtMs.keys()].every((id) => receipts[id] !== undefined) || Date.now() > deadline) break;
    await sleep(100);
  }
  const latencies = [...sentAtMs].flatMap(([id, at]) => (receipts[id] === undefined ? [] : [receipts[id] - at])).sort((a, b) => a - b);
  return {
    edits: settings.edits,
    received: latencies.length,
    editsPerSec: settings.editsPerSec,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    maxMs: latencies.at(-1) ?? Number.NaN,
  };
}
