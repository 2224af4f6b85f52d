import type { BenchOptions } from '../options.js';
import { formatTargets } from '../targets.js';
import { formatMirror, mirrorTargets } from './mirror-report.js';
import { runMirror, type MirrorResult } from './run-mirror.js';

/** The mirror section; a missed goal is reported, not a problem (the figures are recorded either way). */
export async function measureMirror(options: BenchOptions, log: (line: string) => void): Promise<MirrorResult> {
  return runMirror({ features: options.mirrorFeatures, edits: options.mirrorEdits }, log);
}

/** `--mirror`: the mirror section alone; with `--json`, `{ mirror }`. */
export async function mainMirror(options: BenchOptions, log: (line: string) => void): Promise<number> {
  const mirror = await measureMirror(options, log);
  const targets = mirrorTargets(mirror);
  for (const target of targets.filter((t) => !t.met)) log(`target not met: ${target.name}: ${target.value} (goal ${target.goal})`);
  if (options.json) process.stdout.write(`${JSON.stringify({ mirror })}\n`);
  else process.stdout.write(`${[formatMirror(mirror), '', 'targets:', ...formatTargets(targets)].join('\n')}\n`);
  return 0;
}
