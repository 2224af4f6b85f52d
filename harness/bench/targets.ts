import { alignedTable } from './table.js';

/** A goal of the bench and what one run measured against it. */
export interface Target {
  name: string;
  goal: string;
  value: string;
  met: boolean;
}

/** The targets' table, indented: name, goal, measured, met or not. */
export function formatTargets(targets: readonly Target[]): string[] {
  return alignedTable([['', 'goal', 'measured', ''], ...targets.map((t) => [t.name, t.goal, t.value, t.met ? 'met' : 'NOT MET'])]).map(
    (line) => `  ${line}`,
  );
}
