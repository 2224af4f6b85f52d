import { bulkAdd } from '../emulator-control.js';
import type { ServerStats } from './cases/case-server.js';
import { Child } from './ipc.js';

/** The emulator's feature store under volume: one generation of many adds, read back by an asynchronous extractChanges. */
export interface EmulatorFeaturesResult {
  features: number;
  /** `bulk`: the features added in one generation. */
  bulkSeconds: number;
  /** From the asynchronous `extractChanges` request to the last byte of its result. */
  extractSeconds: number;
  /** Rows the result held (every feature added, when it is right). */
  resultRows: number;
  resultMiB: number;
  /** The emulator process before the bulk, and its peak. */
  idleRssMib: number;
  peakRssMib: number;
}

/** The REST path of the emulator's Parcels service (Enterprise side). */
export const PARCELS = 'arcgis/rest/services/Hosted/Parcels/FeatureServer';

/** A form POST with `f=json`; the answer's JSON, or an Error for another status than 200. */
export async function postForm(url: string, fields: Record<string, string>): Promise<Record<string, unknown>> {
  const response = await fetch(url, { method: 'POST', body: new URLSearchParams({ f: 'json', ...fields }) });
  if (response.status !== 200) throw new Error(`HTTP ${response.status} from ${url}`);
  return (await response.json()) as Record<string, unknown>;
}

/**
 * `bulk` of `features` Parcels in a fresh emulator process, then the asynchronous `extractChanges` of that
 * generation with full rows, its result downloaded from the storage path and counted.
 */
export async function runEmulatorFeatures(features: number): Promise<EmulatorFeaturesResult> {
  const emulator = await Child.start<{ port: number }>('emulator', 'workers/emulator.js');
  try {
    const root = `http://127.0.0.1:${emulator.ready.port}`;
    const idle = await emulator.call<Omit<ServerStats, 'acked'>>('stats');
    const bulkStartedMs = Date.now();
    const { serverGen } = await bulkAdd(root, 'Hosted/Parcels.FeatureServer', features);
    const bulkSeconds = (Date.now() - bulkStartedMs) / 1000;
    const { token } = (await postForm(`${root}/arcgis/sharing/rest/generateToken`, { username: 'admin', password: 'admin.pass' })) as {
      token: string;
    };
    const extractStartedMs = Date.now();
    const { statusUrl } = (await postForm(`${root}/${PARCELS}/extractChanges`, {
      token,
      serverGens: `[${serverGen - 1},${serverGen}]`,
      layers: '[0]',
      async: 'true',
    })) as { statusUrl: string };
    let status: Record<string, unknown>;
    do status = await postForm(statusUrl, { token });
    while (status.status === 'InProgress');
    if (status.status !== 'Completed') throw new Error(`extractChanges ended ${JSON.stringify(status)}`);
    const text = await (await fetch(String(status.resultUrl))).text();
    const extractSeconds = (Date.now() - extractStartedMs) / 1000;
    const answer = JSON.parse(text) as { edits: { features: { adds: unknown[] } }[] };
    const peak = await emulator.call<Omit<ServerStats, 'acked'>>('stats');
    return {
      features,
      bulkSeconds,
      extractSeconds,
      resultRows: answer.edits[0]?.features.adds.length ?? 0,
      resultMiB: Buffer.byteLength(text) / 1_048_576,
      idleRssMib: idle.maxRssMb,
      peakRssMib: peak.maxRssMb,
    };
  } finally {
    await emulator.close();
  }
}
