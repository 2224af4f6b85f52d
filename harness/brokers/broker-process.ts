import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';

/** A broker run as a child process: started, stopped or killed, and started again on the same port and data. */
export interface BrokerProcess {
  /** Starts it (again) and resolves once it said it is ready and takes connections. */
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
 * The broker processes running: killed when this process exits without stopping them, through one exit listener (a
 * test file starts many).
 */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) {
    try {
      child.kill('SIGKILL');
    } catch {
      // Gone already.
    }
  }
});

/**
 * A broker process: `command args` with `env`, ready once its output shows `readyLine` and `port` takes connections
 * (within `startMs`). Killed when this process exits without stopping it.
 */
export function brokerProcess(options: {
  name: string;
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  /** The line the broker logs once it takes clients. */
  readyLine: RegExp;
  port: number;
  startMs: number;
  graceMs?: number;
}): BrokerProcess {
  let child: ChildProcess | undefined;
  let output = '';
  const exited = new Map<ChildProcess, Promise<void>>();

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
      running.add(started);
      const gone = new Promise<void>((resolve) =>
        started.once('exit', () => {
          running.delete(started);
          resolve();
        }),
      );
      exited.set(started, gone);
      // Only this start's output is searched for the ready line.
      let since = '';
      let said: () => void = () => undefined;
      const ready = new Promise<void>((resolve) => (said = resolve));
      const keep = (chunk: Buffer): void => {
        const text = chunk.toString('utf8');
        output = (output + text).slice(-65_536);
        since = (since + text).slice(-65_536);
        if (options.readyLine.test(since)) said();
      };
      started.stdout!.on('data', keep);
      started.stderr!.on('data', keep);
      let failed: Error | undefined;
      started.once('error', (err) => (failed = err));
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, options.startMs)));
      await Promise.race([ready, gone, late]);
      clearTimeout(timer);
      if (failed !== undefined || started.exitCode !== null || !options.readyLine.test(since) || !(await portOpen(options.port))) {
        await end('SIGKILL');
        throw new Error(`${options.name} did not start (${failed?.message ?? `exit ${started.exitCode}`}): ${output.slice(-2000)}`);
      }
    },
    stop: () => end('SIGTERM'),
    kill: () => end('SIGKILL'),
    output: () => output,
  };
}
