import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { onCleanup } from '../cleanup.js';

/**
 * A tiny request/reply protocol over Node's IPC channel, so that each piece of a benchmark (server under
 * test, load generator, consumer, sink) runs in a process of its own and is asked for figures when needed.
 */
type CallMessage = { kind: 'call'; id: number; method: string; params: unknown };
type ReplyMessage = { kind: 'reply'; id: number; result?: unknown; error?: string };
type EventMessage = { kind: 'event'; event: string; data: unknown };
type ChildMessage = ReplyMessage | EventMessage;

export type Methods = Record<string, (params: never) => unknown>;

/** Every child still running; killed when the bench exits, however it exits. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

// ---- child side ----

/**
 * Serves `methods` to the parent. `close` is answered and then the process exits with code 0 (so that
 * `--cpu-prof` writes its profile); losing the parent ends the process too.
 */
export function serveParent(methods: Methods): void {
  if (process.send === undefined) throw new Error('this script is started by the bench (it needs an IPC channel)');
  process.on('disconnect', () => process.exit(1));
  process.on('message', (message: CallMessage) => {
    if (message?.kind !== 'call') return;
    const method = methods[message.method];
    void (async () => {
      try {
        if (method === undefined) throw new Error(`no method ${message.method}`);
        const result = await method(message.params as never);
        reply({ kind: 'reply', id: message.id, result }, message.method === 'close');
      } catch (err) {
        reply({ kind: 'reply', id: message.id, error: (err as Error).stack ?? String(err) }, message.method === 'close');
      }
    })();
  });
}

function reply(message: ReplyMessage, thenExit: boolean): void {
  process.send!(message, undefined, {}, () => {
    if (thenExit) process.exit(0);
  });
}

/** Sends an unsolicited event (`ready`, progress) to the parent. */
export function notifyParent(event: string, data: unknown = {}): void {
  process.send?.({ kind: 'event', event, data } satisfies EventMessage);
}

// ---- parent side ----

export interface StartOptions {
  /** Arguments after the script. */
  args?: string[];
  /** Node options, e.g. `--cpu-prof`. */
  execArgv?: string[];
  /** Longest wait for the child's `ready` event. @defaultValue 30000 */
  readyTimeoutMs?: number;
}

/** A child process speaking the protocol above. */
export class Child<Ready = unknown> {
  readonly name: string;
  readonly ready: Ready;
  private readonly process: ChildProcess;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (err: Error) => void }>();
  private readonly exited: Promise<void>;
  private nextId = 1;

  private constructor(name: string, child: ChildProcess, ready: Ready, exited: Promise<void>) {
    this.name = name;
    this.process = child;
    this.ready = ready;
    this.exited = exited;
    child.on('message', (message: ChildMessage) => {
      if (message?.kind !== 'reply') return;
      const call = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.error !== undefined) call?.reject(new Error(`${name}: ${message.error}`));
      else call?.resolve(message.result);
    });
    void exited.then(() => {
      for (const call of this.pending.values())
        call.reject(new Error(`${name} exited (code ${child.exitCode}, signal ${child.signalCode})`));
      this.pending.clear();
    });
  }

  /**
   * Starts `script` (a path relative to the bench's compiled folder, e.g. `cases/bare.js`) and resolves with
   * the data of its `ready` event. The child's stdout goes to our stderr: stdout is kept for the report.
   */
  static async start<R>(name: string, script: string, options: StartOptions = {}): Promise<Child<R>> {
    const path = fileURLToPath(new URL(script, import.meta.url));
    const child = fork(path, options.args ?? [], { execArgv: options.execArgv ?? [], stdio: ['ignore', 2, 2, 'ipc'] });
    running.add(child);
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    // On Ctrl-C the children go before the redis-servers they use (cleanup runs newest first).
    const unregister = onCleanup(async () => {
      child.kill('SIGKILL');
      await exited;
    });
    void exited.then(() => {
      running.delete(child);
      unregister();
    });
    const ready = await new Promise<R>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${name} was not ready within ${options.readyTimeoutMs ?? 30_000} ms`)),
        options.readyTimeoutMs ?? 30_000,
      );
      child.on('message', (message: ChildMessage) => {
        if (message?.kind === 'event' && message.event === 'ready') {
          clearTimeout(timer);
          resolve(message.data as R);
        }
      });
      child.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      void exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`${name} exited before it was ready (code ${child.exitCode}, signal ${child.signalCode})`));
      });
    }).catch((err: unknown) => {
      child.kill('SIGKILL');
      throw err;
    });
    return new Child<R>(name, child, ready, exited);
  }

  get pid(): number | undefined {
    return this.process.pid;
  }

  /** Calls a method of the child; rejects after `timeoutMs` or when the child exits. */
  call<T>(method: string, params: unknown = {}, timeoutMs = 120_000): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${this.name}: ${method} did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (value) => {
          clearTimeout(timer);
          resolve(value as T);
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      });
      this.process.send({ kind: 'call', id, method, params } satisfies CallMessage);
    });
  }

  /** Listens to the child's events (other than `ready`). */
  on(event: string, listener: (data: unknown) => void): void {
    this.process.on('message', (message: ChildMessage) => {
      if (message?.kind === 'event' && message.event === event) listener(message.data);
    });
  }

  /** Asks the child to close and exit; kills it when it has not exited within `timeoutMs`. */
  async close(timeoutMs = 15_000): Promise<void> {
    if (this.process.exitCode !== null || this.process.signalCode !== null) return;
    const timer = setTimeout(() => this.process.kill('SIGKILL'), timeoutMs);
    await this.call('close', {}, timeoutMs).catch(() => undefined);
    await this.exited;
    clearTimeout(timer);
  }

  /** Kills the child at once. */
  async kill(): Promise<void> {
    if (this.process.exitCode === null && this.process.signalCode === null) this.process.kill('SIGKILL');
    await this.exited;
  }
}
