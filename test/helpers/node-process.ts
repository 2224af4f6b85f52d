import { join } from 'node:path';
import { repoRoot } from './paths.js';

/** How to start a Node.js program of the repository: the command, its arguments and its environment. */
export interface NodeCommand {
  file: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

/**
 * `node SCRIPT ARGS` without tap's process-info hook. tap puts the hook in the NODE_OPTIONS of every process a test
 * starts, and loading it costs each Node.js child about half a CPU-second, several hundred times per run:
 * `env -u NODE_OPTIONS` drops it as the child starts. With `coverage`, while tap collects coverage the child writes
 * its own (Node's NODE_V8_COVERAGE) into tap's coverage folder, where tap's report merges it with the test
 * processes' own; without, it writes none (the bench and the fault suite time their loads, and cover nothing the
 * suite counts).
 */
export function nodeCommand(
  script: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  options: { coverage: boolean; nodeArgs?: readonly string[] },
): NodeCommand {
  const rest = { ...env };
  delete rest.NODE_V8_COVERAGE;
  const collecting = options.coverage && process.env._TAPJS_PROCESSINFO_COVERAGE_ === '1';
  const projectRoot = process.env._TAPJS_PROCESSINFO_CWD_ ?? repoRoot;
  return {
    file: 'env',
    args: ['-u', 'NODE_OPTIONS', process.execPath, ...(options.nodeArgs ?? []), script, ...args],
    env: collecting ? { ...rest, NODE_V8_COVERAGE: join(projectRoot, '.tap', 'coverage') } : rest,
  };
}
