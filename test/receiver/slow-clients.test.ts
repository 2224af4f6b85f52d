import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import t, { type Test } from 'tap';
import { sign } from '../../src/signature/sign.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { configFile, startReceiver, TEST_KEY, type TestReceiver } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const redis = await startRedis(t);

/** Opens `count` connections to the receiver and keeps them until teardown. */
async function sockets(t: Test, receiver: TestReceiver, count: number): Promise<Socket[]> {
  const { port } = new URL(receiver.url);
  const opened = await Promise.all(
    Array.from({ length: count }, async () => {
      const socket = connect(Number(port), '127.0.0.1');
      socket.on('error', () => undefined);
      await once(socket, 'connect');
      return socket;
    }),
  );
  t.teardown(() => opened.forEach((socket) => socket.destroy()));
  return opened;
}

/** Sends `n` distinct signed deliveries one after the other; resolves with the slowest answer's time. */
async function deliver(receiver: TestReceiver, n: number, tag: string): Promise<{ statuses: number[]; slowestMs: number }> {
  const statuses: number[] = [];
  let slowestMs = 0;
  for (let i = 0; i < n; i += 1) {
    const body = JSON.stringify({ serviceType: 'GPServer', jobId: `${tag}-${i}`, events: [{ eventType: 'esriJobSucceeded' }] });
    const started = Date.now();
    statuses.push((await receiver.post(body, { 'x-service': sign(TEST_KEY, body) })).status);
    slowestMs = Math.max(slowestMs, Date.now() - started);
  }
  return { statuses, slowestMs };
}

t.test('slowloris clients trickling headers and bodies a byte at a time do not stop other deliveries', async (t) => {
  const receiver = await startReceiver(t, redis);
  const slow = await sockets(t, receiver, 50);
  const body = JSON.stringify({ serviceType: 'GPServer', jobId: 'slow' });
  const request = `POST /webhooks/default HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nx-service: ${sign(TEST_KEY, body)}\r\n\r\n${body}`;
  let sent = 0;
  const trickle = setInterval(() => {
    // Half of them still in their headers, half already in their body: one byte each per tick.
    for (const [index, socket] of slow.entries())
      socket.write(request[(index % 2 === 0 ? 0 : request.indexOf('\r\n\r\n') + 4) + sent] ?? '');
    sent += 1;
  }, 100);
  t.teardown(() => clearInterval(trickle));
  const { statuses, slowestMs } = await deliver(receiver, 50, 'loris');
  t.same(new Set(statuses), new Set([202]), 'every delivery acknowledged while 50 clients trickle');
  t.ok(slowestMs < 3000, `slowest answer ${slowestMs} ms`);
});

t.test('1,000 idle connections do not starve the receiver', async (t) => {
  const receiver = await startReceiver(t, redis);
  await sockets(t, receiver, 1000);
  const { statuses, slowestMs } = await deliver(receiver, 50, 'idle');
  t.same(new Set(statuses), new Set([202]), 'every delivery acknowledged with 1,000 idle connections open');
  t.ok(slowestMs < 3000, `slowest answer ${slowestMs} ms`);
});

t.test('a chunked body far over MAX_BODY_BYTES is cut with 413 without being buffered whole', async (t) => {
  const receiver = await startReceiver(t, redis, { MAX_BODY_BYTES: '1048576' });
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  const total = 50 * 1024 * 1024;
  let streamed = 0;
  const before = process.memoryUsage().rss;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (streamed >= total) return controller.close();
      streamed += chunk.length;
      controller.enqueue(chunk);
    },
  });
  const response = await fetch(`${receiver.url}/webhooks/default`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service': sign(TEST_KEY, 'x') },
    body,
    duplex: 'half',
  } as RequestInit).catch((err: unknown) => err as Error);
  if (response instanceof Response) {
    t.equal(response.status, 413);
    t.match(await response.json(), { code: 'GEOHOOK_ERR_BODY_TOO_LARGE' });
  } else {
    t.pass(`the connection was cut while sending (${response.message})`);
  }
  const grownMb = (process.memoryUsage().rss - before) / 1048576;
  t.ok(grownMb < 40, `memory grew ${grownMb.toFixed(1)} MiB for a 50 MiB body`);
  t.ok(streamed < total, `the sender was stopped after ${(streamed / 1048576).toFixed(1)} MiB of 50`);
});

t.test('a body announced larger than MAX_BODY_BYTES is refused 413 before it is read', async (t) => {
  const receiver = await startReceiver(t, redis);
  const [socket] = await sockets(t, receiver, 1);
  socket!.write(
    `POST /webhooks/default HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${200 * 1024 * 1024}\r\n\r\n{"a":`,
  );
  let answer = '';
  socket!.on('data', (data: Buffer) => (answer += data.toString()));
  await new Promise<void>((resolve) => {
    const check = setInterval(() => {
      if (answer.includes('\r\n\r\n')) {
        clearInterval(check);
        resolve();
      }
    }, 10);
  });
  t.match(answer, /^HTTP\/1\.1 413 /);
  t.match(answer, /GEOHOOK_ERR_BODY_TOO_LARGE/);
});

t.test('the timeouts that cut slow clients off are set explicitly, and the connection cap', async (t) => {
  const { app } = await startReceiver(t, redis);
  t.match(app.server, { headersTimeout: 10_000, requestTimeout: 30_000, keepAliveTimeout: 72_000, timeout: 60_000, maxConnections: 4096 });
});

t.test(
  'past maxConnections open connections, a new one is closed at once, counted and warned of once; the receiver serves again once they go',
  async (t) => {
    const { logger: loggerInstance, lines } = capturingLogger('warn');
    const receiver = await startReceiver(t, redis, { GEOHOOK_CONFIG: configFile(t, { maxConnections: 20 }) }, { loggerInstance });
    const held = await sockets(t, receiver, 20);
    for (const nth of [21, 22, 23]) {
      const refused = await fetch(`${receiver.url}/healthz`).then(
        (response) => `answered ${response.status}`,
        (err: Error) => `closed (${String((err.cause as NodeJS.ErrnoException | undefined)?.code ?? err.message)})`,
      );
      t.match(refused, /^closed/, `connection ${nth}: ${refused}`);
    }
    const warnings = lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter(({ msg }) => String(msg).startsWith('connection cap'))
      .map(({ time: _time, pid: _pid, hostname: _hostname, ...fields }) => fields);
    t.same(
      warnings,
      [{ level: 40, msg: 'connection cap reached: further connections are closed at once', maxConnections: 20 }],
      'three connections closed, one warning',
    );
    for (const socket of held) socket.destroy();
    const metrics = await waitFor('a connection to be accepted again', async () => {
      const response = await fetch(`${receiver.url}/metrics`).catch(() => undefined);
      return response?.status === 200 ? response.text() : undefined;
    });
    t.match(metrics, /^geohook_connections_dropped_total [1-9]\d*$/m, 'the dropped connections are counted');
  },
);
