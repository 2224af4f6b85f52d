import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { reservePort } from '../reserved-ports.js';
import { brokerProcess, portOpen, type BrokerProcess } from './broker-process.js';

/** A private RabbitMQ node: its URL, and `remove()` to stop it, end its epmd and delete its folder. */
export interface RabbitmqServer extends BrokerProcess {
  /** `amqp://127.0.0.1:<port>` (user guest, password guest: pass them as credentials). */
  readonly url: string;
  readonly port: number;
  remove(): Promise<void>;
}

/**
 * The server script itself: Debian's `/usr/sbin/rabbitmq-server` is a wrapper that, run as root, switches to the
 * `rabbitmq` user and its folders; the script under it runs as whoever calls it, with the folders given here.
 */
const SCRIPT =
  ['/usr/lib/rabbitmq/bin/rabbitmq-server', '/usr/local/sbin/rabbitmq-server'].find((path) => existsSync(path)) ?? 'rabbitmq-server';

/**
 * Starts a RabbitMQ node of its own (never the machine's shared broker on 5672): its node name, AMQP port,
 * distribution port and epmd port all fresh, HOME (its Erlang cookie), data and logs in a temporary folder, no
 * plugin, an epmd of its own; `erl` is run directly (`RUNNING_UNDER_SYSTEMD`), so SIGTERM stops it and SIGKILL is a crash. Slow to
 * start (seconds): start one per test file or bench section.
 */
export async function startRabbitmqServer(): Promise<RabbitmqServer> {
  const dir = mkdtempSync(join(tmpdir(), 'geohook-rabbitmq-'));
  const [port, distPort, epmdPort] = [await reservePort(), await reservePort(), await reservePort()];
  for (const folder of ['home', 'mnesia', 'log']) mkdirSync(join(dir, folder));
  writeFileSync(join(dir, 'enabled_plugins'), '[].\n');
  // The default guest user may sign in from anywhere but loopback only by default: loopback is all the tests use.
  writeFileSync(join(dir, 'rabbitmq.conf'), 'log.console = true\nlog.file = false\n');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${process.env.PATH ?? ''}:/usr/sbin:/usr/local/sbin`,
    HOME: join(dir, 'home'),
    RABBITMQ_NODENAME: `geohook-test-${port}@localhost`,
    RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
    RABBITMQ_NODE_PORT: String(port),
    RABBITMQ_DIST_PORT: String(distPort),
    ERL_EPMD_PORT: String(epmdPort),
    ERL_EPMD_ADDRESS: '127.0.0.1',
    RABBITMQ_MNESIA_BASE: join(dir, 'mnesia'),
    RABBITMQ_LOG_BASE: join(dir, 'log'),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, 'enabled_plugins'),
    RABBITMQ_CONFIG_FILE: join(dir, 'rabbitmq.conf'),
    RABBITMQ_ADVANCED_CONFIG_FILE: join(dir, 'advanced.config'),
    RABBITMQ_PID_FILE: join(dir, 'rabbitmq.pid'),
    RUNNING_UNDER_SYSTEMD: 'true',
  };
  const server = brokerProcess({
    name: 'rabbitmq-server',
    command: SCRIPT,
    args: [],
    env,
    readyLine: /Server startup complete/,
    port,
    startMs: 90_000,
    graceMs: 30_000,
  });
  // Its own epmd, in the foreground on a port of its own: the node registers there, and killing it ends it (an epmd the
  // node started itself would outlive the test as a daemon, and refuses -kill while a node is registered).
  const epmd = spawn('epmd', ['-port', String(epmdPort), '-address', '127.0.0.1'], { env, stdio: 'ignore' });
  epmd.on('error', () => undefined);
  const stopEpmd = (): void => {
    epmd.kill('SIGKILL');
  };
  process.once('exit', stopEpmd);
  try {
    for (const deadline = Date.now() + 10_000; !(await portOpen(epmdPort)); await sleep(20))
      if (Date.now() > deadline) throw new Error('epmd did not start');
    await server.start();
  } catch (err) {
    stopEpmd();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    ...server,
    url: `amqp://127.0.0.1:${port}`,
    port,
    async remove() {
      await server.stop();
      stopEpmd();
      process.off('exit', stopEpmd);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
