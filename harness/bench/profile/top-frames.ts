import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { alignedTable } from '../table.js';

/**
 * Self time by function from V8 `.cpuprofile` files (what `node --cpu-prof` writes). Run it on its own:
 * `node dist-harness/harness/bench/profile/top-frames.js <file-or-directory>… [--top N]`.
 */

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface CpuProfile {
  nodes: { id: number; callFrame: CallFrame }[];
  samples: number[];
  timeDeltas: number[];
}

export interface Frame {
  /** Function name, or `(anonymous)`, `(garbage collector)`, `(program)`… */
  name: string;
  /** Where it is: a path relative to the working directory, `node:…`, or empty for V8's own entries. */
  location: string;
  selfMs: number;
  /** Share of the busy time (everything but `(idle)`), %. */
  selfPct: number;
}

export interface ProfileSummary {
  files: string[];
  /** Sampled time in all, ms, and the part of it the process was idle. */
  totalMs: number;
  idleMs: number;
  top: Frame[];
}

function locationOf(frame: CallFrame): string {
  if (frame.url === '') return '';
  const path = frame.url.startsWith('file://') ? relative(process.cwd(), fileURLToPath(frame.url)) : frame.url;
  return `${path}:${frame.lineNumber + 1}`;
}

/** The `.cpuprofile` files among `paths` (a directory stands for the files in it and its subdirectories). */
export function profileFiles(paths: readonly string[]): string[] {
  return paths.flatMap((path) =>
    statSync(path).isDirectory()
      ? readdirSync(path, { recursive: true, encoding: 'utf8' })
          .filter((name) => name.endsWith('.cpuprofile'))
          .sort()
          .map((name) => join(path, name))
      : [path],
  );
}

/** Merges the profiles and returns the `limit` functions with the most self time. */
export function topFrames(files: readonly string[], limit = 15): ProfileSummary {
  const selfUs = new Map<string, { name: string; location: string; us: number }>();
  let totalUs = 0;
  let idleUs = 0;
  for (const file of files) {
    const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
    const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
    // timeDeltas[i] is the time from sample i-1 to sample i: it is spent where sample i-1 was taken.
    for (let index = 0; index < profile.samples.length; index += 1) {
      const us = profile.timeDeltas[index + 1] ?? 0;
      const frame = frames.get(profile.samples[index]!);
      if (frame === undefined) continue;
      totalUs += us;
      if (frame.functionName === '(idle)') {
        idleUs += us;
        continue;
      }
      const name = frame.functionName || '(anonymous)';
      const location = locationOf(frame);
      const key = `${name}\u0000${location}`;
      const entry = selfUs.get(key) ?? { name, location, us: 0 };
      entry.us += us;
      selfUs.set(key, entry);
    }
  }
  const busyUs = Math.max(1, totalUs - idleUs);
  const top = [...selfUs.values()]
    .sort((a, b) => b.us - a.us)
    .slice(0, limit)
    .map(({ name, location, us }) => ({ name, location, selfMs: us / 1000, selfPct: (us / busyUs) * 100 }));
  return { files: [...files], totalMs: totalUs / 1000, idleMs: idleUs / 1000, top };
}

/** The summary as aligned text lines. */
export function formatFrames(summary: ProfileSummary): string[] {
  const busyMs = summary.totalMs - summary.idleMs;
  return [
    `CPU profile of ${summary.files.length} process(es), ${Math.round(busyMs)} ms busy of ${Math.round(summary.totalMs)} ms sampled; top self time:`,
    ...alignedTable([
      ['self ms', '%', 'function', 'location'],
      ...summary.top.map((frame) => [frame.selfMs.toFixed(1), frame.selfPct.toFixed(1), frame.name, frame.location]),
    ]).map((line) => `  ${line}`),
  ];
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  const topIndex = args.indexOf('--top');
  const limit = topIndex === -1 ? 15 : Number(args.splice(topIndex, 2)[1]);
  if (args.length === 0) {
    process.stderr.write('usage: node dist-harness/harness/bench/profile/top-frames.js <file.cpuprofile|directory>… [--top N]\n');
    process.exit(2);
  }
  process.stdout.write(`${formatFrames(topFrames(profileFiles(args), limit)).join('\n')}\n`);
}
