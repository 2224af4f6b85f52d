import type { BenchOptions } from '../options.js';
import { formatTargets } from '../targets.js';
import { formatRelay, relayTargets } from './relay-report.js';
import { runRelay, type RelayResult } from './run-relay.js';

/**
 * The relay section: events queued for a route and drained to a local sink, the naive worker, and change events at
 * 500/s timed to the sink (as many as the queued events, for 20 s at most); a missed goal is reported, not a problem.
 */
export async function measureRelay(options: BenchOptions, log: (line: string) => void): Promise<RelayResult> {
  return runRelay(
    {
      events: options.relayEvents,
      naiveEvents: Math.min(options.relayEvents, 5000),
      paceEventsPerSec: 500,
      paceSeconds: Math.min(options.quick ? 5 : 20, Math.max(1, options.relayEvents / 500)),
    },
    log,
  );
}

/** `--relay`: the relay section alone; `{ relay }` with `--json`. */
export async function mainRelay(options: BenchOptions, log: (line: string) => void): Promise<number> {
  const relay = await measureRelay(options, log);
  const targets = relayTargets(relay);
  for (const target of targets.filter((t) => !t.met)) log(`target not met: ${target.name}: ${target.value} (goal ${target.goal})`);
  process.stdout.write(
    options.json ? `${JSON.stringify({ relay })}\n` : `${[formatRelay(relay), '', 'targets:', ...formatTargets(targets)].join('\n')}\n`,
  );
  return 0;
}
