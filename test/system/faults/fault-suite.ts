import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Test } from 'tap';
import { nodeCommand } from '../../helpers/node-process.js';
import { repoRoot as root } from '../../helpers/paths.js';

const run = promisify(execFile);

/** A row of `npm run test:faults -- --json`. */
export interface FaultRow {
  fault: string;
  durability: 'fast' | 'strict';
  sent: number;
  acknowledged: number;
  found: number;
  lost: number;
  duplicated: number;
  spooled?: number;
  gaveUp?: number;
  retried?: number;
  writtenAtFault?: number;
  notes: string;
  problems: string[];
}

/** The rows of a run, found by fault and durability. */
export interface FaultRows {
  rows: FaultRow[];
  row(fault: string, durability?: 'fast' | 'strict'): FaultRow;
}

/**
 * Runs the fault suite's `faults` (`npm run test:faults -- --only …` with `args`) and checks what every row
 * promises: the rows expected (`fault durability`, in order), no broken promise, nothing stored twice, something
 * acknowledged, and no acknowledged delivery lost (Redis killed with fast durability may lose about a second of
 * writes: reported, not a failure).
 */
export async function runFaultSuite(
  t: Test,
  faults: readonly string[],
  args: readonly string[],
  expected: readonly string[],
): Promise<FaultRows> {
  // The fault suite's processes count towards no coverage, and start without tap's hook.
  const command = nodeCommand('dist-test/harness/faults/run.js', ['--json', '--only', faults.join(','), ...args], process.env, {
    coverage: false,
  });
  const suite = await run(command.file, command.args, { cwd: root, env: command.env, maxBuffer: 16 * 1024 * 1024 }).then(
    ({ stdout }) => ({ code: 0, stdout, stderr: '' }),
    (err: { code: number; stdout: string; stderr: string }) => err,
  );
  t.equal(suite.code, 0, 'no promise broken (exit code 0)', { stderr: suite.stderr.slice(-4000) });
  const rows = JSON.parse(suite.stdout) as FaultRow[];
  t.same(
    rows.map((r) => `${r.fault} ${r.durability}`),
    expected,
    'a row for every fault',
  );
  for (const r of rows) {
    const name = `${r.fault} (${r.durability})`;
    t.same(r.problems, [], `${name}: no broken promise`);
    t.equal(r.duplicated, 0, `${name}: no delivery stored twice`);
    t.ok(r.acknowledged > 0, `${name}: deliveries were acknowledged (${r.acknowledged} of ${r.sent})`);
    t.ok(r.found >= r.acknowledged - r.lost, `${name}: found counts every stored acknowledgement`);
    if (r.fault === 'redis-kill' && r.durability === 'fast') {
      t.ok(
        r.lost <= r.acknowledged,
        `${name}: ${r.lost} acknowledged deliveries lost (fast durability may lose about a second of writes; reported, not a failure)`,
      );
    } else {
      t.equal(r.lost, 0, `${name}: no acknowledged delivery lost`);
    }
  }
  return {
    rows,
    row(fault, durability = 'fast') {
      const found = rows.find((candidate) => candidate.fault === fault && candidate.durability === durability);
      if (found === undefined) throw new Error(`no row for ${fault} (${durability})`);
      return found;
    },
  };
}
