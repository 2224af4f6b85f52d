import type { z } from 'zod';
import { nearestKey, pluralsOf } from './nearest-key.js';
import { isListAt, knownKeysAt } from './schema-at.js';

type Path = readonly PropertyKey[];

/** One problem of a file: where, and what is wrong there. */
interface Problem {
  readonly path: Path;
  readonly message: string;
  /** A key whose absence this problem already explains (`types` when `type` was written). */
  readonly covers?: Path;
}

/** Past this many problems, the rest are counted rather than listed. */
const MAX_PROBLEMS = 10;

const TYPE_NAMES: Readonly<Record<string, string>> = {
  array: 'a list',
  object: 'an object',
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
};

function kindOf(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (value === null) return 'null';
  if (typeof value === 'boolean') return String(value);
  return TYPE_NAMES[typeof value] ?? typeof value;
}

/**
 * The messages of a file's wrong types in plain words (`required: a list`, `a list, not a string`), for
 * `safeParse(…, { error })`; schemas' own messages win over these.
 */
export const fileIssueMessage: z.core.$ZodErrorMap = (issue) => {
  if (issue.code !== 'invalid_type') return undefined;
  const expected = TYPE_NAMES[issue.expected];
  if (issue.input === undefined) return expected === undefined ? 'required' : `required: ${expected}`;
  if (expected === undefined) return undefined;
  return issue.expected === 'int' ? expected : `${expected}, not ${kindOf(issue.input)}`;
};

function valueAt(value: unknown, path: Path): unknown {
  let current = value;
  for (const segment of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[segment];
  }
  return current;
}

/** An unknown key explained: a list key written in the singular, else the nearest known key, else the known keys. */
function unknownKey(schema: z.core.$ZodType, input: unknown, objectPath: Path, key: string): Problem {
  const path = [...objectPath, key];
  const known = knownKeysAt(schema, objectPath);
  const plural = pluralsOf(key).find((name) => known.includes(name) && isListAt(schema, [...objectPath, name]));
  if (plural !== undefined && !Array.isArray(valueAt(input, path)))
    return { path, message: `"${plural}" must be a list (you wrote "${key}")`, covers: [...objectPath, plural] };
  const nearest = nearestKey(key, known);
  if (nearest !== undefined) return { path, message: `unknown key; did you mean "${nearest}"?`, covers: [...objectPath, nearest] };
  const keys = known.length <= 10 ? `; the keys here are ${known.map((name) => `"${name}"`).join(', ')}` : '';
  return { path, message: `unknown key${keys}` };
}

/** Where a path leads in the file, as indexes of keys in the order written (keys the file lacks last). */
function positionOf(input: unknown, path: Path): number[] {
  const position: number[] = [];
  let current = input;
  for (const segment of path) {
    const keys = typeof current === 'object' && current !== null ? Object.keys(current) : [];
    const index = keys.indexOf(String(segment));
    position.push(index === -1 ? Number.MAX_SAFE_INTEGER : index);
    current = valueAt(current, [segment]);
  }
  return position;
}

function compareInFile(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

/** A path as written in JavaScript, `relays[0].types`, with one-line escapes in odd keys (`changes['Hosted/Parcels.FeatureServer']`). */
export function formatPath(path: Path): string {
  return path
    .map((segment, index) => {
      if (typeof segment === 'number') return `[${segment}]`;
      const key = String(segment);
      if (/^[A-Za-z_$][\w$]*$/.test(key)) return index === 0 ? key : `.${key}`;
      return `['${JSON.stringify(key).slice(1, -1)}']`;
    })
    .join('');
}

const samePath = (a: Path, b: Path): boolean => a.length === b.length && a.every((segment, index) => segment === b[index]);

/**
 * The problems zod found in a file, one line each, in the order of the file: unknown keys with the key meant, a
 * missing key already explained by an unknown one left out, no line twice, at most {@link MAX_PROBLEMS} lines.
 */
export function describeFileIssues(issues: readonly z.core.$ZodIssue[], schema: z.core.$ZodType, input: unknown, source: string): string[] {
  const problems = issues.flatMap((issue): Problem[] =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => unknownKey(schema, input, issue.path, key))
      : [{ path: issue.path, message: issue.message }],
  );
  const covered = problems.flatMap((problem) => (problem.covers === undefined ? [] : [problem.covers]));
  const shown = problems
    .filter((problem) => valueAt(input, problem.path) !== undefined || !covered.some((path) => samePath(path, problem.path)))
    .map((problem) => ({ problem, position: positionOf(input, problem.path) }))
    .sort((a, b) => compareInFile(a.position, b.position))
    .map(({ problem }) => `${source}${problem.path.length === 0 ? '' : ` at "${formatPath(problem.path)}"`}: ${problem.message}`);
  const lines = [...new Set(shown)];
  if (lines.length <= MAX_PROBLEMS) return lines;
  return [...lines.slice(0, MAX_PROBLEMS), `${source}: and ${lines.length - MAX_PROBLEMS} more problems`];
}
