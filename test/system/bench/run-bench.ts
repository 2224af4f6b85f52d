import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { nodeCommand } from '../../helpers/node-process.js';
import { repoRoot as root } from '../../helpers/paths.js';

const execFileAsync = promisify(execFile);

/**
 * `npm run bench -- ARGS`, for its stdout. The bench's processes count towards no coverage, and start without tap's
 * hook. This is a smoke of the harness with the smallest sizes it takes: every section runs and reports its figures
 * and targets; `npm run bench` measures at full size.
 */
export async function bench(args: string[]): Promise<string> {
  const command = nodeCommand('dist-test/harness/bench/run.js', args, process.env, { coverage: false });
  const { stdout } = await execFileAsync(command.file, command.args, { cwd: root, env: command.env, maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}
