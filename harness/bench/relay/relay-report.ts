import { fixed, thousands } from '../figures.js';
import type { Target } from '../targets.js';
import type { RelayResult } from './run-relay.js';

/** The relays' goals (issues 40, 54): rate to a local sink, with a transform, against the naive worker, and latency at a steady pace. */
export function relayTargets(relay: RelayResult): Target[] {
  return [
    {
      name: 'relay deliveries to a local sink',
      goal: '≥ 2,000/s',
      value: `${thousands(relay.deliveriesPerSec)}/s`,
      met: relay.deliveriesPerSec >= 2000,
    },
    {
      name: 'relay with a 10-field transform vs without (same run)',
      goal: '≥ 0.8×',
      value: `${thousands(relay.transformPerSec)}/s, ${fixed(relay.transformVsPlain, 2)}×`,
      met: relay.transformVsPlain >= 0.8,
    },
    {
      name: 'relay vs a worker awaiting one fetch per event',
      goal: '≥ 1.5×',
      value: `${fixed(relay.vsNaive, 1)}×`,
      met: relay.vsNaive >= 1.5,
    },
    {
      name: `change event to sink at ${relay.paceEventsPerSec}/s, p99`,
      goal: '≤ 250 ms',
      value: `${thousands(relay.p99Ms)} ms`,
      met: relay.p99Ms <= 250,
    },
  ];
}

/** The relays' lines of the human report. */
export function formatRelay(relay: RelayResult): string {
  return [
    `relay: ${thousands(relay.events)} queued events delivered at ${thousands(relay.deliveriesPerSec)}/s (${relay.repeats} repeats); ` +
      `a worker awaiting one fetch per event ${thousands(relay.naivePerSec)}/s over ${thousands(relay.naiveEvents)}: ${fixed(relay.vsNaive, 1)}×`,
    `  with a 10-field transform building every body: ${thousands(relay.transformPerSec)}/s (${fixed(relay.transformVsPlain, 2)}× without)`,
    `  ${thousands(relay.paceEvents)} change events written at ${relay.paceEventsPerSec}/s to the sink: p50 ${thousands(relay.p50Ms)} ms, ` +
      `p99 ${thousands(relay.p99Ms)} ms, max ${thousands(relay.maxMs)} ms`,
  ].join('\n');
}
