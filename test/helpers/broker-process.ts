import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** A broker run as a child process of the test: started, stopped or killed, and started again on the same port and data. */
export interface BrokerProcess {
  /** Starts it (again) and resolves once `ready` holds. */
  start(): Promise<void>;
  /** SIGTERM, then waits for it to exit (SIGKILL after `graceMs`). */
  stop(): Promise<void>;
  /** SIGKILL: a crash. */
  kill(): Promise<void>;
  /** Its output so far (the last 64 KiB), for a failure's message. */
  output(): string;
}

/** True once something accepts TCP connections on 127.0.0.1:`port`. */
export const portOpen = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

/**
 * A broker process: `command args` with `env`, ready when `ready()` resolves true (polled, within `startMs`).
 * Killed when the test process exits without its teardown.
 */
export function brokerProcess(options: {
  name: string;
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  ready: () => Promise<boolean>;
  startMs: number;
  graceMs?: number;
}): BrokerProcess {
  let child: ChildProcess | undefined;
  let output = '';
  const exited = new Map<ChildProcess, Promise<void>>();
  const killOnExit = (): void => {
    try {
      child?.kill('SIGKILL');
    } catch {
      // Gone already.
    }
  };
  process.on('exit', killOnExit);

  const end = async (signal: NodeJS.Signals): Promise<void> => {
    const running = child;
    if (running === undefined) return;
    child = undefined;
    running.kill(signal);
    const gone = exited.get(running)!;
    const timer = setTimeout(() => running.kill('SIGKILL'), options.graceMs ?? 15_000);
    await gone;
    clearTimeout(timer);
  };

  return {
    async start() {
      if (child !== undefined) throw new Error(`${options.name} is running already`);
      const started = spawn(options.command, options.args, { env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
      child = started;
      exited.set(started, new Promise((resolve) => started.once('exit', () => resolve())));
      const keep = (chunk: Buffer): void => {
        output = (output + chunk.toString('utf8')).slice(-65_536);
      };
      started.stdout!.on('data', keep);
      started.stderr!.on('data', keep);
      let failed: Error | undefined;
      started.once('error', (err) => (failed = err));
      const deadline = Date.now() + options.startMs;
      while (!(await options.ready())) {
        if (failed !== undefined || started.exitCode !== null || Date.now() > deadline) {
          await end('SIGKILL');
          throw new Error(`${options.name} did not start (${failed?.message ?? `exit ${started.exitCode}`}): ${output.slice(-2000)}`);
        }
        await sleep(50);
      }
    },
    stop: () => end('SIGTERM'),
    kill: () => end('SIGKILL'),
    output: () => output,
  };
}
