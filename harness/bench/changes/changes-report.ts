import { fixed, thousands } from '../figures.js';
import type { Target } from '../targets.js';
import type { ChangesResult } from './run-changes.js';

/** The change events' goals: rate, ratio to the floor, memory, and an edit's latency. */
export function changeTargets(changes: ChangesResult): Target[] {
  return [
    {
      name: `change events, one generation of ${thousands(changes.features)} adds`,
      goal: '≥ 20,000/s',
      value: `${thousands(changes.eventsPerSec)}/s`,
      met: changes.eventsPerSec >= 20_000,
    },
    { name: 'change events vs the floor', goal: '≥ 0.80×', value: `${fixed(changes.vsFloor, 2)}×`, met: changes.vsFloor >= 0.8 },
    {
      name: "resolver's peak RSS growth",
      goal: '≤ 100 MiB',
      value: `${fixed(changes.rssDeltaMb)} MiB`,
      met: changes.rssDeltaMb <= 100,
    },
    {
      name: 'edit to change event, p99',
      goal: '≤ 1,000 ms (stretch 300)',
      value: `${thousands(changes.p99Ms)} ms`,
      met: changes.p99Ms <= 1000,
    },
  ];
}

/** The change events' lines of the human report. */
export function formatChanges(changes: ChangesResult): string {
  const { latency, floor, cpuMs } = changes;
  const perEventUs = (ms: number | undefined): string => (ms === undefined ? '–' : `${fixed((ms * 1000) / changes.features)} µs`);
  return [
    `change events: ${thousands(changes.events)}/${thousands(changes.features)} adds of one generation on change-events in ${fixed(changes.seconds, 1)} s ` +
      `after the bulk's ${fixed(changes.bulkSeconds, 1)} s (first event at ${fixed(changes.firstEventSeconds, 1)} s) at ${thousands(changes.eventsPerSec)}/s; floor (fetch, JSON.parse, addBulk) ${thousands(changes.floorPerSec)}/s ` +
      `in ${fixed(floor.seconds, 1)} s, ${fixed(changes.vsFloor, 2)}× of it; geohook's peak RSS ${fixed(changes.rssBeforeMb)} → ${fixed(changes.rssPeakMb)} MiB (+${fixed(changes.rssDeltaMb)})`,
    `  CPU per event: geohook ${perEventUs(cpuMs.server)}, emulator ${perEventUs(cpuMs.emulator)}, Redis ${perEventUs(cpuMs.redis)}; ` +
      `floor ${perEventUs(floor.cpuMs)}, its Redis ${perEventUs(floor.redisCpuMs)} (extractChanges ${fixed(floor.extractSeconds, 1)} s, ` +
      `JSON.parse ${fixed(floor.parseSeconds, 1)} s, addBulk ${fixed(floor.addSeconds, 1)} s)`,
    `  ${latency.received}/${latency.edits} single edits at ${latency.editsPerSec}/s to their event in a consumer: p50 ${thousands(latency.p50Ms)} ms, p99 ${thousands(latency.p99Ms)} ms, max ${thousands(latency.maxMs)} ms`,
  ].join('\n');
}
