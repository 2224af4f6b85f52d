import { fixed, thousands } from '../figures.js';
import type { Target } from '../targets.js';
import type { CpuPerEvent, StreamsResult } from './run-streams.js';

const cpuOf = ({ nodeUs, redisUs }: CpuPerEvent): string => `${thousands(nodeUs)} + ${thousands(redisUs)} µs`;

/** The streams' goals (issue 56): each lane against a bare producer with the same acknowledgements, and latency at a pace. */
export function streamsTargets(streams: StreamsResult): Target[] {
  return [
    {
      name: 'stream lane into JetStream vs a bare producer',
      goal: '≥ 0.7×',
      value: `${thousands(streams.natsPerSec)}/s, ${fixed(streams.vsBareNats, 2)}×`,
      met: streams.vsBareNats >= 0.7,
    },
    {
      name: 'stream lane into a RabbitMQ quorum queue vs a bare producer',
      goal: '≥ 0.7×',
      value: `${thousands(streams.amqpPerSec)}/s, ${fixed(streams.vsBareAmqp, 2)}×`,
      met: streams.vsBareAmqp >= 0.7,
    },
    {
      name: `stored event to acknowledged publish at ${streams.paceEventsPerSec}/s, p99`,
      goal: '≤ 100 ms',
      value: `${thousands(streams.p99Ms)} ms`,
      met: streams.p99Ms <= 100,
    },
  ];
}

/** The streams' lines of the human report. */
export function formatStreams(streams: StreamsResult): string {
  return [
    `streams: ${thousands(streams.events)} stored events over ${thousands(streams.features)} features, through the lane: JetStream ` +
      `${thousands(streams.natsPerSec)}/s (bare ${thousands(streams.bareNatsPerSec)}/s, ${fixed(streams.vsBareNats, 2)}×), RabbitMQ quorum ` +
      `${thousands(streams.amqpPerSec)}/s (bare ${thousands(streams.bareAmqpPerSec)}/s, ${fixed(streams.vsBareAmqp, 2)}×)`,
    `  ${thousands(streams.paceEvents)} events stored at ${streams.paceEventsPerSec}/s to the acknowledgement: JetStream p50 ` +
      `${thousands(streams.natsP50Ms)} ms, p99 ${thousands(streams.natsP99Ms)} ms; RabbitMQ p50 ${thousands(streams.amqpP50Ms)} ms, ` +
      `p99 ${thousands(streams.amqpP99Ms)} ms`,
    `  CPU per event of the burst (this process + redis-server): JetStream bare ${cpuOf(streams.cpu.bareNats)}, lane ` +
      `${cpuOf(streams.cpu.natsLane)}; RabbitMQ bare ${cpuOf(streams.cpu.bareAmqp)}, lane ${cpuOf(streams.cpu.amqpLane)}`,
  ].join('\n');
}
