import { thousands } from '../figures.js';
import type { Target } from '../targets.js';
import type { SubmissionsResult } from './run-submissions.js';

/** The submissions' goals (issue 55): last edit to `change.submission`, with the Survey123 webhook and by the window. */
export function submissionsTargets(submissions: SubmissionsResult): Target[] {
  const { survey123, window, windowMs } = submissions;
  return [
    {
      name: 'submission closed by its Survey123 webhook: last edit to change.submission, p99',
      goal: '≤ 500 ms',
      value: `${thousands(survey123.p99Ms)} ms`,
      met: survey123.received === survey123.submissions && survey123.p99Ms <= 500,
    },
    {
      name: `submission closed by its window (${thousands(windowMs)} ms): last edit to change.submission, p99`,
      goal: `≤ ${thousands(windowMs + 500)} ms`,
      value: `${thousands(window.p99Ms)} ms`,
      met: window.received === window.submissions && window.p99Ms <= windowMs + 500,
    },
  ];
}

/** The submissions' lines of the human report. */
export function formatSubmissions(submissions: SubmissionsResult): string {
  const line = (what: string, run: SubmissionsResult['survey123']): string =>
    `  ${what}: ${run.received}/${run.submissions} handed over, p50 ${thousands(run.p50Ms)} ms, p99 ${thousands(run.p99Ms)} ms, max ${thousands(run.maxMs)} ms`;
  return [
    `submissions: a parcel, 2 inspections and 4 photos each, ${submissions.perSec}/s, last edit to change.submission in a consumer`,
    line('closed by the Survey123 webhook', submissions.survey123),
    line(`closed by the ${thousands(submissions.windowMs)}-ms window`, submissions.window),
  ].join('\n');
}
