import type { BenchOptions } from '../options.js';
import { formatTargets } from '../targets.js';
import { runSubmissions, type SubmissionsResult } from './run-submissions.js';
import { formatSubmissions, submissionsTargets } from './submissions-report.js';

/** Submissions made per second, as field crews might at peak. */
const SUBMISSIONS_PER_SEC = 5;

/** The submissions section: submissions timed to their change.submission, closed by Survey123 and by the window. */
export async function measureSubmissions(
  options: BenchOptions,
  problems: string[],
  log: (line: string) => void,
): Promise<SubmissionsResult> {
  const submissions = await runSubmissions({ submissions: options.submissionCount, perSec: SUBMISSIONS_PER_SEC }, log);
  for (const [what, run] of [
    ['Survey123', submissions.survey123],
    ['window', submissions.window],
  ] as const)
    if (run.received !== run.submissions)
      problems.push(
        `submissions (${what}): ${run.received} of ${run.submissions} change.submission events handed over, closed by the ${what}`,
      );
  return submissions;
}

/** `--submissions`: the submissions section alone; `{ submissions }` with `--json`. */
export async function mainSubmissions(options: BenchOptions, log: (line: string) => void): Promise<number> {
  const problems: string[] = [];
  const submissions = await measureSubmissions(options, problems, log);
  const targets = submissionsTargets(submissions);
  for (const target of targets.filter((t) => !t.met)) log(`target not met: ${target.name}: ${target.value} (goal ${target.goal})`);
  for (const problem of problems) log(`PROBLEM: ${problem}`);
  process.stdout.write(
    options.json
      ? `${JSON.stringify({ submissions })}\n`
      : `${[formatSubmissions(submissions), '', 'targets:', ...formatTargets(targets)].join('\n')}\n`,
  );
  return problems.length > 0 ? 1 : 0;
}
