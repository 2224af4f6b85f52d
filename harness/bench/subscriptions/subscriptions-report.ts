import { fixed, thousands } from '../figures.js';
import type { Target } from '../targets.js';
import type { SubscriptionsResult } from './run-subscriptions.js';

/** The subscriptions' goals (issue 50): acknowledgements unmoved by 16 subscriptions, the fan-out's rate, its latency. */
export function subscriptionTargets(result: SubscriptionsResult): Target[] {
  return [
    {
      name: `acks with ${result.subscriptions} subscriptions vs none`,
      goal: '≥ 0.95×',
      value: `${fixed(result.ackRatio16, 2)}×`,
      met: result.ackRatio16 >= 0.95,
    },
    {
      name: `fan-out to ${result.subscriptions} subscriptions`,
      goal: '≥ 20,000 events/s',
      value: `${thousands(result.fanoutPerSec)}/s`,
      met: result.fanoutPerSec >= 20_000,
    },
    {
      name: `202 to the last subscription at ${thousands(result.latency.perSec)}/s, p99`,
      goal: '≤ 100 ms',
      value: `${thousands(result.p99Ms)} ms`,
      met: result.p99Ms <= 100,
    },
  ];
}

/** The subscriptions' lines of the human report. */
export function formatSubscriptions(result: SubscriptionsResult): string {
  const { fanout, latency } = result;
  return [
    `subscriptions: deliveries acknowledged at ${thousands(result.ackPerSec0)}/s with none, ${thousands(result.ackPerSec16)}/s with ` +
      `${result.subscriptions}: ${fixed(result.ackRatio16, 2)}× (per round ${perRound(result)})`,
    `  fan-out of ${thousands(fanout.events)} logged events to ${fanout.subscriptions} subscriptions: ${thousands(fanout.perSec)} events/s ` +
      `(${fixed(fanout.seconds, 2)} s, ${thousands(fanout.dropped)} dropped; CPU per job µs: server ${fixed(fanout.cpuUsPerJob.server, 1)}, ` +
      `redis ${fixed(fanout.cpuUsPerJob.redis ?? Number.NaN, 1)})`,
    `  ${thousands(latency.events)} deliveries at ${thousands(latency.perSec)}/s, 202 to the last subscription's queue: p50 ${thousands(latency.p50Ms)} ms, ` +
      `p99 ${thousands(latency.p99Ms)} ms, max ${thousands(latency.maxMs)} ms (queues read every ${latency.pollEveryMs} ms, ${fixed(latency.pollRoundTripMs, 1)} ms a read; ` +
      `CPU per delivery µs: server ${fixed(latency.cpuUsPerEvent.server, 0)}, redis ${fixed(latency.cpuUsPerEvent.redis ?? Number.NaN, 0)})`,
  ].join('\n');
}

/** ack16/ack0 of each round. */
function perRound(result: SubscriptionsResult): string {
  const rounds = [...new Set(result.rounds.map((turn) => turn.round))];
  const rate = (round: number, count: number): number =>
    result.rounds.find((turn) => turn.round === round && turn.subscriptions === count)?.ackPerSec ?? Number.NaN;
  return rounds.map((round) => fixed(rate(round, result.subscriptions) / rate(round, 0), 2)).join(', ');
}
