import type { Child } from '../ipc.js';
import { measureAcks, type AckTurn } from './ack-rounds.js';
import { measureFanoutLatency, type FanoutLatency } from './fanout-latency.js';
import { measureFanoutRate, type FanoutRate } from './fanout-rate.js';

/** What `npm run bench -- --subscriptions` prints under `subscriptions`. */
export interface SubscriptionsResult {
  /** Subscriptions of the runs that have some, each taking every delivery. */
  subscriptions: number;
  /** Signed deliveries acknowledged per second by geohook's server with no subscription: median of the rounds. */
  ackPerSec0: number;
  /** The same with 16 subscriptions (the fan-out running in the same process): median of the rounds. */
  ackPerSec16: number;
  /** ackPerSec16 / ackPerSec0 within each round (the two turns back to back), median of the rounds. */
  ackRatio16: number;
  /** Events × subscriptions handed over per second from a log the fan-out had not read. */
  fanoutPerSec: number;
  /** From a delivery's 202 to its event in the last subscription's queue, at `latency.perSec`: p99. */
  p99Ms: number;
  rounds: AckTurn[];
  fanout: FanoutRate;
  latency: FanoutLatency;
}

export interface SubscriptionsSettings {
  rounds: number;
  warmupSeconds: number;
  durationSeconds: number;
  connections: number;
  /** Events in the log that the fan-out hands to every subscription, timed. */
  fanoutEvents: number;
  paceEventsPerSec: number;
  paceEvents: number;
}

/** The 16 subscriptions of issue 50's goals. */
export const SUBSCRIPTIONS = 16;

/**
 * The subscriptions section, each run on a redis-server of its own beside geohook's server in a process of its own:
 * acknowledgements with 0 and 16 subscriptions in turns, the fan-out of a log of `fanoutEvents` to the 16, and the
 * latency from 202 to the last subscription's queue at a steady pace.
 */
export async function runSubscriptions(
  loader: Child,
  settings: SubscriptionsSettings,
  log: (line: string) => void,
): Promise<SubscriptionsResult> {
  log(
    `subscriptions: ${settings.rounds} round(s) of deliveries acknowledged by geohook's server with 0 and ${SUBSCRIPTIONS} subscriptions`,
  );
  const acks = await measureAcks(loader, { ...settings, subscriptions: SUBSCRIPTIONS }, log);
  log(
    `subscriptions: ${settings.fanoutEvents.toLocaleString('en-US')} events in the log, then the fan-out to ${SUBSCRIPTIONS} subscriptions`,
  );
  const fanout = await measureFanoutRate(loader, settings.fanoutEvents, SUBSCRIPTIONS);
  log(
    `subscriptions: ${settings.paceEvents.toLocaleString('en-US')} deliveries at ${settings.paceEventsPerSec}/s, each timed to the last queue`,
  );
  const latency = await measureFanoutLatency({
    subscriptions: SUBSCRIPTIONS,
    perSec: settings.paceEventsPerSec,
    events: settings.paceEvents,
  });
  return {
    subscriptions: SUBSCRIPTIONS,
    ackPerSec0: acks.ackPerSec0,
    ackPerSec16: acks.ackPerSecN,
    ackRatio16: acks.ratio,
    fanoutPerSec: fanout.perSec,
    p99Ms: latency.p99Ms,
    rounds: acks.turns,
    fanout,
    latency,
  };
}
