import { join } from 'node:path';
import type { BenchOptions } from '../options.js';
import { formatFrames, profileFiles, topFrames } from '../profile/top-frames.js';
import { formatTargets } from '../targets.js';
import { changeTargets, formatChanges } from './changes-report.js';
import { runChanges, type ChangesResult } from './run-changes.js';

/** Single edits at this pace, timed to their change event (after a tenth as many of warm-up). */
const CHANGE_EDITS_PER_SEC = 20;

/** Change events: every feature of the generation is one event, the floor read every row, every single edit's event came. */
export async function measureChanges(
  options: BenchOptions,
  problems: string[],
  profileDir: string | undefined,
  log: (line: string) => void,
): Promise<ChangesResult> {
  log(
    `change events: geohook's server follows Parcels (CHANGES); ${options.changesFeatures.toLocaleString('en-US')} adds in one generation`,
  );
  const changes = await runChanges(
    {
      features: options.changesFeatures,
      edits: options.changesEdits,
      editsPerSec: CHANGE_EDITS_PER_SEC,
      ...(profileDir === undefined ? {} : { serverExecArgv: ['--cpu-prof', '--cpu-prof-dir', join(profileDir, 'changes')] }),
    },
    log,
  );
  if (changes.events !== changes.features)
    problems.push(`changes: change-events gained ${changes.events} events for ${changes.features} features added in one generation`);
  if (changes.floor.rows !== changes.features || changes.floor.jobs !== changes.features)
    problems.push(
      `changes: the floor read ${changes.floor.rows} rows and added ${changes.floor.jobs} jobs for ${changes.features} features`,
    );
  if (changes.latency.received !== changes.latency.edits)
    problems.push(`changes: the consumer got the change events of ${changes.latency.received} of ${changes.latency.edits} single edits`);
  return changes;
}

/**
 * `--changes`: the change-events section alone, geohook's server profiled into `profileDir` when it is set; with
 * `--json`, `{ changes }` (and `cpuProfile.changes` when profiled).
 */
export async function mainChanges(options: BenchOptions, profileDir: string | undefined, log: (line: string) => void): Promise<number> {
  const problems: string[] = [];
  const changes = await measureChanges(options, problems, profileDir, log);
  const targets = changeTargets(changes);
  for (const target of targets.filter((t) => !t.met)) log(`target not met: ${target.name}: ${target.value} (goal ${target.goal})`);
  for (const problem of problems) log(`PROBLEM: ${problem}`);
  const profile = profileDir === undefined ? undefined : topFrames(profileFiles([join(profileDir, 'changes')]), 15);
  if (profileDir !== undefined) log(`CPU profile of geohook's server: ${profileDir}`);
  if (options.json)
    process.stdout.write(`${JSON.stringify({ changes, ...(profile === undefined ? {} : { cpuProfile: { changes: profile } }) })}\n`);
  else {
    const frames = profile === undefined ? [] : ['', `geohook server resolving change events, ${formatFrames(profile).join('\n')}`];
    process.stdout.write(`${[formatChanges(changes), '', 'targets:', ...formatTargets(targets), ...frames].join('\n')}\n`);
  }
  return problems.length > 0 ? 1 : 0;
}
