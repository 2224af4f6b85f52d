import type { ServerStats } from './cases/case-server.js';
import { Child } from './ipc.js';
import { BENCH_SECRET } from './payloads.js';
import type { SinkStats } from './workers/sink.js';

export interface EmulatorResult {
  webhooks: number;
  /** GP jobs fired through the control route. */
  jobs: number;
  /** Deliveries expected (webhooks × jobs) and received by the sink. */
  deliveries: number;
  received: number;
  /** Received with a signature header. */
  signed: number;
  /** From the first job fired to the last delivery received. */
  deliveriesPerSec: number;
  /** Seconds it took to fire every job (the control route answers once the deliveries are started). */
  fireSeconds: number;
  emulatorCpuPct: number;
  emulatorRssMb: number;
}

export interface EmulatorSettings {
  deliveries: number;
  webhooks: number;
  /** Fire requests in flight at once. */
  fireConcurrency: number;
  timeoutMs: number;
  /** Node options of the emulator's process (`--cpu-prof`…). */
  execArgv?: string[];
}

const SERVICE = 'Tools/Buffer.GPServer';

async function postForm(url: string, fields: Record<string, string>): Promise<Record<string, unknown>> {
  const response = await fetch(url, { method: 'POST', body: new URLSearchParams(fields) });
  if (response.status !== 200) throw new Error(`HTTP ${response.status} from ${url}`);
  return (await response.json()) as Record<string, unknown>;
}

/**
 * The emulator's delivery engine firing signed deliveries at a bare sink, each piece in its own process:
 * `webhooks` webhooks on the GP service Tools/Buffer (made through the admin API), then GP jobs fired
 * through `POST /emulator/services/Tools/Buffer.GPServer/jobs` until `deliveries` are due.
 */
export async function runEmulatorFanOut(settings: EmulatorSettings): Promise<EmulatorResult> {
  const sink = await Child.start<{ port: number }>('sink', 'workers/sink.js');
  let emulator: Child<{ port: number }> | undefined;
  try {
    emulator = await Child.start<{ port: number }>('emulator', 'workers/emulator.js', { execArgv: settings.execArgv ?? [] });
    const root = `http://127.0.0.1:${emulator.ready.port}`;
    const { token } = (await postForm(`${root}/arcgis/sharing/rest/generateToken`, {
      username: 'admin',
      password: 'admin.pass',
      f: 'json',
    })) as { token: string };
    for (let index = 0; index < settings.webhooks; index += 1) {
      const created = await postForm(`${root}/arcgis/admin/services/${SERVICE}/webhooks/create`, {
        name: `bench-${index}`,
        hookUrl: `http://127.0.0.1:${sink.ready.port}/hooks/${index}`,
        signatureKey: BENCH_SECRET,
        active: 'true',
        f: 'json',
        token,
      });
      if (created.status !== 'success') throw new Error(`webhook not created: ${JSON.stringify(created)}`);
    }
    const jobs = Math.ceil(settings.deliveries / settings.webhooks);
    const deliveries = jobs * settings.webhooks;
    const before = await emulator.call<Omit<ServerStats, 'acked'>>('stats');
    const startedAtMs = Date.now();
    let fired = 0;
    const fire = async (): Promise<void> => {
      while (fired < jobs) {
        fired += 1;
        const response = await fetch(`${root}/emulator/services/${SERVICE}/jobs`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"outcome":"succeeded"}',
        });
        const answer = (await response.json()) as { deliveries?: unknown[] };
        if (response.status !== 200 || answer.deliveries?.length !== settings.webhooks) {
          throw new Error(`firing a job: HTTP ${response.status} ${JSON.stringify(answer).slice(0, 200)}`);
        }
      }
    };
    await Promise.all(Array.from({ length: settings.fireConcurrency }, fire));
    const firedAtMs = Date.now();
    const deadline = startedAtMs + settings.timeoutMs;
    let stats: SinkStats;
    for (;;) {
      stats = await sink.call<SinkStats>('stats');
      if (stats.received >= deliveries || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const after = await emulator.call<Omit<ServerStats, 'acked'>>('stats');
    const lastAtMs = stats.lastAtMs ?? Date.now();
    return {
      webhooks: settings.webhooks,
      jobs,
      deliveries,
      received: stats.received,
      signed: stats.signed,
      deliveriesPerSec: stats.received / Math.max(0.001, (lastAtMs - startedAtMs) / 1000),
      fireSeconds: (firedAtMs - startedAtMs) / 1000,
      emulatorCpuPct: ((after.cpuMs - before.cpuMs) / Math.max(1, lastAtMs - startedAtMs)) * 100,
      emulatorRssMb: after.maxRssMb,
    };
  } finally {
    await emulator?.close();
    await sink.close();
  }
}
