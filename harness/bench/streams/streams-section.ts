import type { BenchOptions } from '../options.js';
import { formatTargets } from '../targets.js';
import { runStreams, type StreamsResult } from './run-streams.js';
import { formatStreams, streamsTargets } from './streams-report.js';

/** The streams section: a burst through each lane against a bare producer, then events at 1,000/s timed; a missed goal is reported. */
export async function measureStreams(options: BenchOptions, log: (line: string) => void): Promise<StreamsResult> {
  const paceEventsPerSec = 1000;
  // As many paced events as stored at once, at most 10 seconds' worth (quick: 3).
  const paceEvents = Math.min(options.streamEvents, paceEventsPerSec * (options.quick ? 3 : 10));
  return runStreams({ events: options.streamEvents, paceEventsPerSec, paceEvents }, log);
}

/** `--streams`: the streams section alone; `{ streams }` with `--json`. */
export async function mainStreams(options: BenchOptions, log: (line: string) => void): Promise<number> {
  const streams = await measureStreams(options, log);
  const targets = streamsTargets(streams);
  for (const target of targets.filter((t) => !t.met)) log(`target not met: ${target.name}: ${target.value} (goal ${target.goal})`);
  process.stdout.write(
    options.json
      ? `${JSON.stringify({ streams })}\n`
      : `${[formatStreams(streams), '', 'targets:', ...formatTargets(targets)].join('\n')}\n`,
  );
  return 0;
}
