import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { GeohookError } from '../errors.js';

/** Options of {@link RedisServer}. */
export interface RedisServerOptions {
  /** Port to listen on; 0 picks a free one. @defaultValue 0 */
  port?: number;
  /** Working directory (AOF files). Created when missing. */
  dir: string;
  /** AOF persistence (`appendonly yes`). @defaultValue false */
  appendOnly?: boolean;
  /** `appendfsync` policy when `appendOnly`. @defaultValue 'everysec' */
  appendFsync?: 'always' | 'everysec' | 'no';
  /** A configuration file, read before the arguments (a sentinel needs one it can rewrite). */
  configFile?: string;
  /** Further `redis-server` arguments, after geohook's (e.g. `--cluster-enabled yes` for a cluster node). */
  extraArgs?: readonly string[];
  /** The binary to run. @defaultValue 'redis-server' */
  binary?: string;
  /** Longest wait for the server to accept connections. @defaultValue 10000 */
  startTimeoutMs?: number;
}

/** A free TCP port on the loopback interface, as the kernel hands them out. */
export async function findFreePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return address.port;
}

const MISSING_BINARY =
  'redis-server was not found: install it (Debian/Ubuntu: apt-get install -y redis-server; macOS: brew install redis) or set REDIS_URL';

/**
 * A local `redis-server` child process on 127.0.0.1: `geohook up` keeps its events in one, and the tests
 * start one per file. It can be stopped and started again on the same port and directory.
 */
export class RedisServer {
  private readonly options: RedisServerOptions;
  private child: ChildProcess | undefined;
  private boundPort: number;

  constructor(options: RedisServerOptions) {
    this.options = options;
    this.boundPort = options.port ?? 0;
  }

  get port(): number {
    return this.boundPort;
  }

  /** Process id of the running server. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.boundPort}`;
  }

  /** Starts the server and resolves once it accepts connections. */
  async start(): Promise<void> {
    if (this.child !== undefined) return;
    mkdirSync(this.options.dir, { recursive: true });
    const pickPort = this.boundPort === 0;
    for (let attempt = 1; ; attempt += 1) {
      if (pickPort) this.boundPort = await findFreePort();
      try {
        await this.spawnServer();
        return;
      } catch (err) {
        if (!(pickPort && attempt < 5 && /address already in use/i.test((err as Error).message))) throw err;
      }
    }
  }

  private async spawnServer(): Promise<void> {
    const { dir, configFile, appendOnly = false, appendFsync = 'everysec', extraArgs = [], binary = 'redis-server', startTimeoutMs = 10_000 } = this.options;
    const args = [
      ...(configFile === undefined ? [] : [configFile]),
      '--port', String(this.boundPort),
      '--bind', '127.0.0.1',
      '--dir', dir,
      '--save', '',
      '--appendonly', appendOnly ? 'yes' : 'no',
      '--appendfsync', appendFsync,
      '--maxmemory-policy', 'noeviction',
      '--daemonize', 'no',
      '--loglevel', 'notice',
      '--logfile', '',
      ...extraArgs,
    ];
    // Its own process group: a Ctrl-C reaches geohook, which drains first and then stops Redis.
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const killOnExit = (): void => {
      child.kill('SIGTERM');
    };
    process.once('exit', killOnExit);
    child.once('exit', () => process.off('exit', killOnExit));
    let output = '';
    const ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server did not start within ${startTimeoutMs} ms: ${output}`)), startTimeoutMs);
      const onData = (chunk: Buffer): void => {
        output += chunk.toString();
        // A sentinel never says it is ready; it names its id once it listens.
        if (/ready to accept connections|Sentinel ID is/i.test(output)) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('error', (err: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        reject(err.code === 'ENOENT' ? new GeohookError('GEOHOOK_ERR_REDIS_SERVER', MISSING_BINARY) : err);
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited with code ${code}: ${output.trim()}`));
      });
    });
    try {
      await ready;
    } catch (err) {
      child.kill('SIGKILL');
      if (err instanceof GeohookError) throw err;
      throw new GeohookError('GEOHOOK_ERR_REDIS_SERVER', (err as Error).message, { cause: err });
    }
    child.stdout!.resume();
    child.stderr!.resume();
    this.child = child;
  }

  /** Stops the server (SIGTERM: Redis flushes the AOF first) and waits for it to exit. */
  async stop(): Promise<void> {
    await this.terminate('SIGTERM');
  }

  /** Kills the server as a crash would (SIGKILL: nothing is flushed) and waits for it to exit. */
  async kill(): Promise<void> {
    await this.terminate('SIGKILL');
  }

  private async terminate(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (child === undefined) return;
    this.child = undefined;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill(signal);
    await exited;
  }
}
