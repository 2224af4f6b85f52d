import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { chmodSync, mkdirSync, readFileSync, realpathSync } from 'node:fs';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { ioredis } from '../commonjs/ioredis.js';
import { GeohookError } from '../errors.js';
import { forgetRedisUrl, readRecordedRedisUrl, recordRedisUrl } from './recorded-redis-url.js';

/** Options of {@link RedisServer}. */
export interface RedisServerOptions {
  /** Port to listen on; 0 picks a free one. @defaultValue 0 */
  port?: number;
  /** Working directory (AOF files). Created when missing; made readable by its owner only (mode 0700). */
  dir: string;
  /**
   * Clients must give a password: a random one, made once per instance, set with `requirepass` through the
   * server's standard input (not its command line, which every local user can read) and carried by
   * {@link RedisServer.url}. With `configFile` this needs Redis 7 or later.
   * @defaultValue true
   */
  requirePassword?: boolean;
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

/** Ports below this are left to well-known services. */
const LOWEST_PICKED_PORT = 20_000;

/** The first port of the range the kernel takes outgoing connections' local ports from (Linux), else IANA's. */
function firstEphemeralPort(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > 0) return low;
  } catch {
    // Not Linux.
  }
  return 49_152;
}

/** Listens on `port` of the loopback interface (0: one the kernel picks) and closes again; the port, or undefined when taken. */
async function tryPort(port: number): Promise<number | undefined> {
  const server = createServer();
  try {
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    const address = server.address();
    return address === null || typeof address === 'string' ? undefined : address.port;
  } catch {
    return undefined;
  } finally {
    server.close();
  }
}

/**
 * A free TCP port on the loopback interface, picked at random below the range the kernel takes outgoing
 * connections' ports from, so that none of those can take it before it is listened on; one the kernel picks
 * when no such port is free.
 */
export async function findFreePort(): Promise<number> {
  const below = firstEphemeralPort();
  for (let attempt = 0; attempt < 20 && below > LOWEST_PICKED_PORT; attempt += 1) {
    const port = await tryPort(LOWEST_PICKED_PORT + Math.floor(Math.random() * (below - LOWEST_PICKED_PORT)));
    if (port !== undefined) return port;
  }
  const port = await tryPort(0);
  if (port === undefined) throw new Error('no free TCP port on 127.0.0.1');
  return port;
}

const MISSING_BINARY =
  'redis-server was not found: install it (Debian/Ubuntu: apt-get install -y redis-server; macOS: brew install redis) or set REDIS_URL';

/** True while process `pid` runs (EPERM: it runs as another user). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The redis-servers this process started and that still run: stopped when it exits, through one exit listener (a
 * process may start several: a test suite, Sentinel's).
 */
const runningChildren = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of runningChildren) child.kill('SIGTERM');
});

/**
 * A local `redis-server` child process on 127.0.0.1: `geohook up` keeps its events in one, and the tests
 * start one per file. It can be stopped and started again on the same port and directory. While it runs,
 * its URL is recorded in its directory (`geohook consume` finds a `geohook up` that way, and a server left
 * running by a killed process is found again by {@link RedisServer.stopLeftover}).
 */
export class RedisServer {
  private readonly options: RedisServerOptions;
  private child: ChildProcess | undefined;
  private boundPort: number;
  private readonly password: string | undefined;

  constructor(options: RedisServerOptions) {
    this.options = options;
    this.boundPort = options.port ?? 0;
    this.password = options.requirePassword === false ? undefined : randomBytes(24).toString('base64url');
  }

  get port(): number {
    return this.boundPort;
  }

  /** Process id of the running server. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The URL clients connect with: the password included. */
  get url(): string {
    return `redis://${this.password === undefined ? '' : `:${this.password}@`}127.0.0.1:${this.boundPort}`;
  }

  /** The URL without the password: for logs and messages. */
  get displayUrl(): string {
    return `redis://127.0.0.1:${this.boundPort}`;
  }

  /** Starts the server and resolves once it accepts connections. */
  async start(): Promise<void> {
    if (this.child !== undefined) return;
    // Its AOF files hold the events and the generated signature keys: other local users may not read them.
    mkdirSync(this.options.dir, { recursive: true, mode: 0o700 });
    chmodSync(this.options.dir, 0o700);
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
    const {
      dir,
      configFile,
      appendOnly = false,
      appendFsync = 'everysec',
      extraArgs = [],
      binary = 'redis-server',
      startTimeoutMs = 10_000,
    } = this.options;
    // `-`: the password comes as configuration on stdin (first, or after a configuration file, Redis 7+).
    const stdin = this.password === undefined ? [] : ['-'];
    const args = [
      ...(configFile === undefined ? stdin : [configFile]),
      '--port',
      String(this.boundPort),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      appendOnly ? 'yes' : 'no',
      '--appendfsync',
      appendFsync,
      '--maxmemory-policy',
      'noeviction',
      '--daemonize',
      'no',
      '--loglevel',
      'notice',
      '--logfile',
      '',
      ...extraArgs,
      ...(configFile === undefined ? [] : stdin),
    ];
    // Its own process group: a Ctrl-C reaches geohook, which drains first and then stops Redis.
    const child = spawn(binary, args, { stdio: [this.password === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'], detached: true });
    child.stdin?.on('error', () => undefined); // a server that exits at once closes it; the exit is what is reported
    child.stdin?.end(`requirepass ${this.password}\n`);
    runningChildren.add(child);
    child.once('exit', () => runningChildren.delete(child));
    let output = '';
    const ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`redis-server did not start within ${startTimeoutMs} ms: ${output}`)),
        startTimeoutMs,
      );
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
    recordRedisUrl(dir, this.url);
  }

  /**
   * Shuts down a redis-server that a killed process left running in `dir` (SIGKILL gives no chance to stop
   * children): its URL is still recorded there and it answers with that very directory. Its AOF is flushed
   * as on any shutdown. Resolves to true when there was one, once it has exited.
   */
  static async stopLeftover(dir: string): Promise<boolean> {
    const url = readRecordedRedisUrl(dir);
    if (url === undefined) return false;
    const client = new ioredis.Redis(url, { lazyConnect: true, connectTimeout: 1000, retryStrategy: () => null, maxRetriesPerRequest: 0 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      const [, serverDir] = (await client.config('GET', 'dir')) as [string, string];
      if (realpathSync(serverDir) !== realpathSync(dir)) return false;
      const pid = Number(/^process_id:(\d+)/m.exec(await client.info('server'))?.[1]);
      await client.call('SHUTDOWN').catch(() => undefined); // it closes the connection as it exits
      for (let waited = 0; isRunning(pid) && waited < 10_000; waited += 50) await sleep(50);
      return true;
    } catch {
      return false; // nothing answers there: the record is stale
    } finally {
      client.disconnect();
      forgetRedisUrl(dir);
    }
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
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill(signal);
      await exited;
    }
    forgetRedisUrl(this.options.dir);
  }
}
