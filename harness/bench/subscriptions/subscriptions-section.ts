import { Child } from '../ipc.js';
import type { BenchOptions } from '../options.js';
import { formatTargets } from '../targets.js';
import { runSubscriptions, type SubscriptionsResult } from './run-subscriptions.js';
import { formatSubscriptions, subscriptionTargets } from './subscriptions-report.js';

/** The steady pace of the latency run. */
const PACE_EVENTS_PER_SEC = 1000;

/** Bodies the section's own load generator signs beforehand: the fan-out's log, or a turn's load at 20k/s. */
export const subscriptionsPoolSize = (options: BenchOptions): number =>
  Math.max(options.subscriptionEvents, Math.ceil((options.warmupSeconds + options.durationSeconds + 1) * 20_000));

/**
 * The subscriptions section with the run's load generator: its turns as long as the HTTP cases', the fan-out of
 * `--subscription-events`, then as many deliveries at 1,000/s (for 10 s at most; quick 3 s). A missed goal is
 * reported, not a problem; an event lost, dropped or refused is.
 */
export async function measureSubscriptions(
  options: BenchOptions,
  loader: Child,
  problems: string[],
  log: (line: string) => void,
): Promise<SubscriptionsResult> {
  const result = await runSubscriptions(
    loader,
    {
      rounds: options.rounds,
      warmupSeconds: options.warmupSeconds,
      durationSeconds: options.durationSeconds,
      connections: options.connections,
      fanoutEvents: options.subscriptionEvents,
      paceEventsPerSec: PACE_EVENTS_PER_SEC,
      paceEvents: Math.min(options.subscriptionEvents, PACE_EVENTS_PER_SEC * (options.quick ? 3 : 10)),
    },
    log,
  );
  for (const turn of result.rounds)
    if (turn.non2xx + turn.errors > 0)
      problems.push(
        `subscriptions: round ${turn.round}, ${turn.subscriptions} subscriptions: ${turn.non2xx} non-2xx, ${turn.errors} errors`,
      );
  if (result.fanout.dropped > 0) problems.push(`subscriptions: the fan-out dropped ${result.fanout.dropped} events (backlog caps)`);
  if (result.latency.non2xx + result.latency.errors > 0)
    problems.push(`subscriptions: the paced deliveries had ${result.latency.non2xx} non-2xx answers and ${result.latency.errors} errors`);
  return result;
}

/** `--subscriptions`: the subscriptions section alone, with a load generator of its own; `{ subscriptions }` with `--json`. */
export async function mainSubscriptions(options: BenchOptions, log: (line: string) => void): Promise<number> {
  const poolSize = subscriptionsPoolSize(options);
  log(`signing ${poolSize.toLocaleString('en-US')} distinct bodies in the load generator`);
  const loader = await Child.start('loader', 'workers/loader.js', { args: [String(poolSize)], readyTimeoutMs: 300_000 });
  const problems: string[] = [];
  let subscriptions: SubscriptionsResult;
  try {
    subscriptions = await measureSubscriptions(options, loader, problems, log);
  } finally {
    await loader.close();
  }
  const targets = subscriptionTargets(subscriptions);
  for (const target of targets.filter((t) => !t.met)) log(`target not met: ${target.name}: ${target.value} (goal ${target.goal})`);
  for (const problem of problems) log(`PROBLEM: ${problem}`);
  process.stdout.write(
    options.json
      ? `${JSON.stringify({ subscriptions })}\n`
      : `${[formatSubscriptions(subscriptions), '', 'targets:', ...formatTargets(targets)].join('\n')}\n`,
  );
  return problems.length > 0 ? 1 : 0;
}
