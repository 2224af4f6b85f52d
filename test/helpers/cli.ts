import { spawn, type ChildProcess } from 'node:child_process';
import { nodeCommand, type NodeCommand } from './node-process.js';
import { repoPath } from './paths.js';

/** The built binary: `npm test` builds before it runs the suite. */
export const CLI = repoPath('dist', 'cli.js');

/**
 * `geohook ARGS` with `env` (PATH and HOME added), its coverage counted, Node.js given `nodeArgs`: for
 * `spawn(command.file, command.args, { env: command.env })`.
 */
export function geohookCommand(args: string[], env: Record<string, string> | undefined, nodeArgs: readonly string[] = []): NodeCommand {
  return nodeCommand(CLI, args, { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, { coverage: true, nodeArgs });
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `geohook ARGS` to completion, with `input` on stdin, in `cwd` (default: the test's). With `timeoutMs`, a run
 * still going then is killed (SIGKILL) and resolves with code null: a command that should have stopped did not.
 */
export function runCli(
  args: string[],
  options: { env?: Record<string, string>; input?: Buffer | string; cwd?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const command = geohookCommand(args, options.env);
    const child = spawn(command.file, command.args, { cwd: options.cwd, env: command.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = options.timeoutMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}

/** Starts `geohook ARGS` in the background, in `cwd`, Node.js given `nodeArgs`; resolves once a stderr/stdout line matches `ready`. */
export function startCli(
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
  { cwd, nodeArgs }: { cwd?: string; nodeArgs?: readonly string[] } = {},
): Promise<{ child: ChildProcess; output: () => string }> {
  return new Promise((resolve, reject) => {
    const command = geohookCommand(args, env, nodeArgs);
    const child = spawn(command.file, command.args, { cwd, env: command.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const timer = setTimeout(() => reject(new Error(`not ready within 20 s:\n${output}`)), 20_000);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (ready.test(output)) {
        clearTimeout(timer);
        resolve({ child, output: () => output });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before it was ready:\n${output}`));
    });
  });
}
