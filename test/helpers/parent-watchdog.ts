import { spawn } from 'node:child_process';

/**
 * Runs the shell `script` (its arguments `$1`… from `args`) once this process has ended, however it ended: a SIGKILL
 * (tap's, at a test file's time limit) runs no `exit` handler, and a server started detached would run on. A `sh` in a
 * process group of its own waits on a pipe only this process writes to: the kernel closes it as this process dies,
 * and the shell then runs the script. Neither the shell nor the pipe keeps this process alive. Returns the release,
 * to call before stopping what the script would stop.
 */
export function whenThisProcessEnds(script: string, args: readonly string[] = []): () => void {
  const watchdog = spawn('sh', ['-c', `read -r _; ${script}`, 'sh', ...args], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
  watchdog.unref();
  watchdog.stdin!.on('error', () => undefined);
  (watchdog.stdin as unknown as { unref(): void }).unref();
  return () => {
    // SIGKILL first: the shell never reads the end of the pipe that closing it gives.
    watchdog.kill('SIGKILL');
    watchdog.stdin!.destroy();
  };
}

/** Sends `signal` to process `pid` once this process has ended, however it ended (see {@link whenThisProcessEnds}). */
export function killWithThisProcess(pid: number, signal: 'TERM' | 'KILL' = 'TERM'): () => void {
  return whenThisProcessEnds(`kill -${signal} "$1" 2>/dev/null`, [String(pid)]);
}
