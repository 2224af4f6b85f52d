import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { appendFileSync, closeSync, existsSync, openSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { onCleanup } from '../cleanup.js';
import { reservePort } from '../reserved-ports.js';
import { isListenedOn, listensOn } from './listening-socket.js';

/** The built CLI (`npm run build`): the receiver runs as `geohook serve`, in a process of its own. */
export const CLI = fileURLToPath(new URL('../../../dist/cli.js', import.meta.url));

/** What a receiver process is started with. */
export interface ReceiverSettings {
  /**
   * Port of the first start; a later start takes the port of the one before.
   * @defaultValue a port of its own ({@link reservePort})
   */
  port?: number;
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

/** First starts tried, each on a new port, while another process takes the port first. */
const PORT_TRIES = 5;

/** How one start ended: ready, or the child gone because another process listens on its port. */
type StartOutcome = 'ready' | 'port taken';

/**
 * `node dist/cli.js serve` with its settings in the environment (and only those, with PATH and HOME: no
 * variable of the caller leaks in). It can be killed with SIGKILL and started again on the same port.
 */
export class ReceiverProcess {
  private readonly settings: ReceiverSettings;
  private port: number | undefined;
  private child: ChildProcess | undefined;
  private exited: Promise<unknown> = Promise.resolve();
  /** Times the process was started. */
  starts = 0;

  constructor(settings: ReceiverSettings) {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
    this.settings = settings;
    this.port = settings.port;
    onCleanup(() => this.kill());
  }

  /** Its base URL: known once it has started. */
  get url(): string {
    if (this.port === undefined) throw new Error('the receiver has no port before it starts');
    return `http://127.0.0.1:${this.port}`;
  }

  /**
   * Starts the process and resolves once `/readyz` answers 200 (Redis answered) from this process, not from
   * another one on its port. When another process takes the port first, the first start goes on with a new
   * port; a later start fails, as the port is the one its senders know.
   */
  async start(): Promise<void> {
    if (this.child !== undefined) throw new Error('the receiver is already running');
    const first = this.starts === 0;
    for (let tries = 1; ; tries += 1) {
      const port = (this.port ??= await reservePort());
      if ((await this.startOn(port)) === 'ready') return;
      const taken = `port ${port} was taken by another process before the receiver listened on it`;
      if (!first) throw new Error(`${taken}: its senders reach that process now; see ${this.settings.logFile}`);
      if (tries === PORT_TRIES) throw new Error(`${taken}, ${tries} times; see ${this.settings.logFile}`);
      appendFileSync(this.settings.logFile, `harness: ${taken}; starting again on another\n`);
      this.port = undefined;
    }
  }

  private async startOn(port: number): Promise<StartOutcome> {
    const { redisUrl, prefix, secret, durability, spoolDir, logFile, readyTimeoutMs = 30_000, env: extra = {} } = this.settings;
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
        if (isListenedOn(port) === true) return 'port taken';
        throw new Error(`the receiver exited before it was ready (code ${child.exitCode}); see ${logFile}`);
      }
      const status = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(1000) }).then(
        (response) => response.status,
        () => 0,
      );
      // Off Linux whose socket answered cannot be told: a live child's port is taken for its own.
      if (status === 200 && child.pid !== undefined && listensOn(child.pid, port) !== false) return 'ready';
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
