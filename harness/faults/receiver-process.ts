import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, openSync, closeSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { onCleanup } from '../cleanup.js';

/** The built CLI (`npm run build`): the receiver runs as `geohook serve`, in a process of its own. */
export const CLI = fileURLToPath(new URL('../../../dist/cli.js', import.meta.url));

/** What a receiver process is started with. */
export interface ReceiverSettings {
  port: number;
  redisUrl: string;
  prefix: string;
  secret: string;
  durability: 'fast' | 'strict';
  /** SPOOL_DIR; unset: 503 while Redis is down. */
  spoolDir?: string;
  /** File its stdout and stderr (pino lines) are appended to. */
  logFile: string;
  /** Longest wait for `/readyz` to answer 200. @defaultValue 30000 */
  readyTimeoutMs?: number;
  /** Further variables (ADMIN_URL, CHANGES…); they win over those above. */
  env?: Readonly<Record<string, string>>;
}

/**
 * `node dist/cli.js serve` with its settings in the environment (and only those, with PATH and HOME: no
 * variable of the caller leaks in). It can be killed with SIGKILL and started again on the same port.
 */
export class ReceiverProcess {
  private readonly settings: ReceiverSettings;
  private child: ChildProcess | undefined;
  private exited: Promise<unknown> = Promise.resolve();
  /** Times the process was started. */
  starts = 0;

  constructor(settings: ReceiverSettings) {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
    this.settings = settings;
    onCleanup(() => this.kill());
  }

  get url(): string {
    return `http://127.0.0.1:${this.settings.port}`;
  }

  /** Starts the process and resolves once `/readyz` answers 200 (Redis answered). */
  async start(): Promise<void> {
    if (this.child !== undefined) throw new Error('the receiver is already running');
    const { port, redisUrl, prefix, secret, durability, spoolDir, logFile, readyTimeoutMs = 30_000, env: extra = {} } = this.settings;
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      HOST: '127.0.0.1',
      PORT: String(port),
      REDIS_URL: redisUrl,
      HOOK_SECRETS: secret,
      GEOHOOK_PREFIX: prefix,
      DURABILITY: durability,
      LOG_LEVEL: 'warn',
      ...(spoolDir === undefined ? {} : { SPOOL_DIR: spoolDir }),
      ...extra,
    };
    const log = openSync(logFile, 'a');
    const child = spawn(process.execPath, [CLI, 'serve'], { env, stdio: ['ignore', log, log] });
    closeSync(log);
    this.child = child;
    this.starts += 1;
    this.exited = once(child, 'exit');
    const deadline = Date.now() + readyTimeoutMs;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) {
        this.child = undefined;
        throw new Error(`the receiver exited before it was ready (code ${child.exitCode}); see ${logFile}`);
      }
      const status = await fetch(`${this.url}/readyz`, { signal: AbortSignal.timeout(1000) }).then(
        (response) => response.status,
        () => 0,
      );
      if (status === 200) return;
      if (Date.now() > deadline) throw new Error(`the receiver was not ready within ${readyTimeoutMs} ms; see ${logFile}`);
      await sleep(50);
    }
  }

  /** SIGSTOP: the process is frozen as it is (its sockets stay open) until {@link resume}. */
  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  /** SIGCONT after {@link pause}. */
  resume(): void {
    this.child?.kill('SIGCONT');
  }

  /** SIGKILL: in-flight requests lose their connection, nothing is drained. Waits for the exit. */
  async kill(): Promise<void> {
    await this.signal('SIGKILL');
  }

  /** SIGTERM: the receiver drains and exits (killed after 15 s). */
  async stop(): Promise<void> {
    const child = this.child;
    const timer = setTimeout(() => child?.kill('SIGKILL'), 15_000);
    await this.signal('SIGTERM');
    clearTimeout(timer);
  }

  private async signal(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (child === undefined) return;
    this.child = undefined;
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await this.exited;
  }
}
