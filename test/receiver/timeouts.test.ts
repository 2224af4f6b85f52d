import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import t, { type Test } from 'tap';
import { loadConfig } from '../../src/config/load-config.js';
import { sign } from '../../src/signature/sign.js';
import { configFile, startReceiver, TEST_KEY, type TestReceiver } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const redis = await startRedis(t);

/** Short timeouts so that each cut-off is seen in well under a second or two. */
const TIMEOUTS = { headersMs: 500, requestMs: 1000, socketIdleMs: 3000, keepAliveMs: 1500 };
/**
 * The latest a cut may come: well short of the 30 s of Node's default connection check (the bug these tests
 * catch), with room for a loaded, shared machine; the figures themselves are printed, not asserted.
 */
const latest = (timeoutMs: number): number => timeoutMs + 5000;
/** How much earlier than its timeout a client may see its cut, having seen its connection open a little after the receiver. */
const EARLY_MS = 100;
/** A 408 in the geohook error shape, closing the connection. */
const TIMEOUT_ANSWER =
  /^HTTP\/1\.1 408 Request Timeout\r\n[^]*connection: close\r\n\r\n\{"statusCode":408,"code":"GEOHOOK_ERR_REQUEST_TIMEOUT","error":"Request Timeout","message":"the request was not received in time/i;

async function startShortReceiver(t: Test, timeouts: Partial<typeof TIMEOUTS> = {}): Promise<TestReceiver> {
  return startReceiver(t, redis, { GEOHOOK_CONFIG: configFile(t, { timeouts: { ...TIMEOUTS, ...timeouts } }) });
}

/** A raw connection that records what the receiver answers and when it closes. */
interface RawClient {
  socket: Socket;
  answer: () => string;
  /** Milliseconds from `since` (the connection by default) to the close. */
  closed: Promise<number>;
  since: (at: number) => void;
}

async function rawClient(t: Test, receiver: TestReceiver): Promise<RawClient> {
  const socket = connect(Number(new URL(receiver.url).port), '127.0.0.1');
  socket.on('error', () => undefined);
  t.teardown(() => socket.destroy());
  await once(socket, 'connect');
  let from = Date.now();
  let answer = '';
  socket.on('data', (data: Buffer) => (answer += data.toString('latin1')));
  const closed = once(socket, 'close').then(() => Date.now() - from);
  return { socket, answer: () => answer, closed, since: (at) => (from = at) };
}

/** Writes `text` one byte every `everyMs` until the socket closes; returns a stopper. */
function trickle(socket: Socket, text: string, everyMs: number): () => void {
  let at = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || at >= text.length) return clearInterval(timer);
    socket.write(text[at++]!);
  }, everyMs);
  return () => clearInterval(timer);
}

function signedRequest(tag: string, extraHeaders = ''): { head: string; body: string } {
  const body = JSON.stringify({ serviceType: 'GPServer', jobId: tag, events: [{ eventType: 'esriJobSucceeded' }] });
  const head =
    'POST /webhooks/default HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n' +
    `content-length: ${Buffer.byteLength(body)}\r\nx-service: ${sign(TEST_KEY, body)}\r\n${extraHeaders}\r\n`;
  return { head, body };
}

/** Signed deliveries one after another; every status and each answer's time in ms. */
async function deliver(receiver: TestReceiver, count: number, tag: string): Promise<{ statuses: Set<number>; latenciesMs: number[] }> {
  const statuses = new Set<number>();
  const latenciesMs: number[] = [];
  for (let i = 0; i < count; i += 1) {
    const { body } = signedRequest(`${tag}-${i}`);
    const started = performance.now();
    statuses.add((await receiver.post(body, { 'x-service': sign(TEST_KEY, body) })).status);
    latenciesMs.push(performance.now() - started);
  }
  return { statuses, latenciesMs: latenciesMs.sort((a, b) => a - b) };
}

const ms = (value: number): string => `${Math.round(value)} ms`;

// Each test has its own receiver and spends its time waiting for a timeout to fire: they run side by side (in a test of
// their own, so that the file's neighbours in its group run one at a time).
t.test('the receiver cuts off slow and idle clients on time', async (t) => {
  t.jobs = 4;
  t.test('the production timeouts are the documented ones', async (t) => {
    const { app } = await startReceiver(t, redis);
    t.match(app.server, { headersTimeout: 10_000, requestTimeout: 30_000, timeout: 60_000, keepAliveTimeout: 72_000 });
    // Node enforces the headers and request timeouts only when it checks its connections (every 30 s by
    // default, which let a client trickling headers hold its connection 30 s instead of 10).
    t.match(app.server, { connectionsCheckingInterval: 1000 }, 'checked every second');
  });

  t.test('timeouts in GEOHOOK_CONFIG are validated: whole milliseconds, the headers timeout within the request timeout', async (t) => {
    const load = (timeouts: unknown) => () => loadConfig({ GEOHOOK_CONFIG: configFile(t, { timeouts }) });
    t.match(
      load({ headersMs: 2000 })().timeouts,
      { headersMs: 2000, requestMs: 30_000, socketIdleMs: 60_000, keepAliveMs: 72_000 },
      'the others keep their defaults',
    );
    t.throws(load({ headersMs: 40_000 }), { code: 'GEOHOOK_ERR_CONFIG', message: /at "timeouts\.headersMs": at most requestMs/ });
    t.throws(load({ requestMs: 50 }), { code: 'GEOHOOK_ERR_CONFIG', message: /at "timeouts\.requestMs": from 100 to 600000 ms/ });
    t.throws(load({ keepAliveMs: 1.5 }), { code: 'GEOHOOK_ERR_CONFIG', message: /at "timeouts\.keepAliveMs": whole milliseconds/ });
    t.throws(
      load({ idleMs: 1000 }),
      { code: 'GEOHOOK_ERR_CONFIG', message: /at "timeouts\.idleMs": unknown key/ },
      'unknown keys are refused',
    );
  });

  t.test('a client trickling its headers a byte at a time is answered 408 and cut off once headersMs have passed', async (t) => {
    const receiver = await startShortReceiver(t);
    const client = await rawClient(t, receiver);
    const { head } = signedRequest('headers', `x-padding: ${'p'.repeat(400)}\r\n`);
    client.since(Date.now());
    t.teardown(trickle(client.socket, head, 20));
    const closedMs = await client.closed;
    t.match(client.answer(), TIMEOUT_ANSWER);
    t.ok(
      closedMs >= TIMEOUTS.headersMs - EARLY_MS && closedMs < latest(TIMEOUTS.headersMs),
      `cut off after ${ms(closedMs)} (headersMs ${TIMEOUTS.headersMs})`,
    );
  });

  t.test('a client trickling its body a byte at a time is answered 408 and cut off once requestMs have passed', async (t) => {
    const receiver = await startShortReceiver(t);
    const client = await rawClient(t, receiver);
    const body = JSON.stringify({ serviceType: 'GPServer', jobId: 'body', padding: 'p'.repeat(400) });
    client.socket.write(
      `POST /webhooks/default HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nx-service: ${sign(TEST_KEY, body)}\r\n\r\n`,
    );
    client.since(Date.now());
    t.teardown(trickle(client.socket, body, 20));
    const closedMs = await client.closed;
    t.match(client.answer(), TIMEOUT_ANSWER);
    t.ok(
      closedMs >= TIMEOUTS.requestMs - EARLY_MS && closedMs < latest(TIMEOUTS.requestMs),
      `cut off after ${ms(closedMs)} (requestMs ${TIMEOUTS.requestMs})`,
    );
  });

  t.test('a client that waits before its first byte is still cut off headersMs after it connected, not after that byte', async (t) => {
    // Node counts from the first byte: a client waiting 1.9 s, then trickling, held its connection 3.9 s.
    const receiver = await startShortReceiver(t, { headersMs: 2000, requestMs: 3000 });
    const client = await rawClient(t, receiver);
    const { head } = signedRequest('late-headers', `x-padding: ${'p'.repeat(400)}\r\n`);
    const wait = setTimeout(() => t.teardown(trickle(client.socket, head, 20)), 1900);
    t.teardown(() => clearTimeout(wait));
    const closedMs = await client.closed;
    t.match(client.answer(), TIMEOUT_ANSWER);
    t.ok(closedMs >= 2000 - EARLY_MS && closedMs < 3500, `cut off ${ms(closedMs)} after the connection (headersMs 2000)`);
  });

  t.test('a client that waits, then sends its headers and trickles its body, is cut off requestMs after it connected', async (t) => {
    const receiver = await startShortReceiver(t, { headersMs: 2000, requestMs: 3500 });
    const client = await rawClient(t, receiver);
    const { head, body } = signedRequest('late-body');
    const wait = setTimeout(() => {
      client.socket.write(head);
      t.teardown(trickle(client.socket, `${body}${' '.repeat(400)}`, 50)); // the body alone takes over 4 s: requestMs ends it
    }, 1400); // 600 ms before headersMs; a deadline counted from the headers would end at 4,900 ms
    t.teardown(() => clearTimeout(wait));
    const closedMs = await client.closed;
    t.match(client.answer(), TIMEOUT_ANSWER);
    t.ok(closedMs >= 3500 - EARLY_MS && closedMs < 4700, `cut off ${ms(closedMs)} after the connection (requestMs 3500)`);
  });

  t.test('the deadlines of the first request end with it: the connection then waits for the next one up to keepAliveMs', async (t) => {
    const receiver = await startShortReceiver(t, { headersMs: 500, requestMs: 1000, keepAliveMs: 3000 });
    const client = await rawClient(t, receiver);
    const first = signedRequest('first-then-idle');
    client.socket.write(first.head + first.body);
    await waitFor('the first answer', () => client.answer().includes('"status":"accepted"'), { intervalMs: 10 });
    await new Promise((resolve) => setTimeout(resolve, 1500)); // past requestMs since the connection
    t.notOk(client.socket.destroyed, 'the connection is still open');
    const second = signedRequest('second-after-idle');
    client.socket.write(second.head + second.body);
    await waitFor('the second answer', () => client.answer().split('"status":"accepted"').length >= 3, { intervalMs: 10 });
    t.equal(client.answer().match(/HTTP\/1\.1 202 /g)?.length, 2, 'both answered on the one connection');
  });

  t.test('a connection that sends nothing is answered 408 and closed once headersMs have passed', async (t) => {
    const receiver = await startShortReceiver(t);
    const client = await rawClient(t, receiver);
    const closedMs = await client.closed;
    t.match(client.answer(), TIMEOUT_ANSWER);
    t.ok(closedMs >= TIMEOUTS.headersMs - EARLY_MS && closedMs < latest(TIMEOUTS.headersMs), `closed after ${ms(closedMs)}`);
  });

  t.test('a keep-alive connection outlives headersMs between deliveries and is closed once keepAliveMs have passed idle', async (t) => {
    const receiver = await startShortReceiver(t);
    const client = await rawClient(t, receiver);
    const first = signedRequest('keep-alive-1');
    client.socket.write(first.head + first.body);
    await waitFor('the first answer', () => client.answer().includes('"status":"accepted"'), { intervalMs: 10 });
    t.match(client.answer(), /^HTTP\/1\.1 202 /);
    await new Promise((resolve) => setTimeout(resolve, TIMEOUTS.headersMs + 300)); // idle past headersMs: what is tested
    const second = signedRequest('keep-alive-2');
    client.socket.write(second.head + second.body);
    await waitFor('the second answer', () => client.answer().split('"status":"accepted"').length >= 3, { intervalMs: 10 });
    client.since(Date.now());
    t.equal(
      client.answer().match(/HTTP\/1\.1 202 /g)?.length,
      2,
      'the second delivery, past headersMs, is answered on the same connection',
    );
    t.match(client.answer(), /\r\nKeep-Alive: timeout=1\r\n/, 'the client is told the keep-alive timeout, in whole seconds');
    // Node closes the socket 1 s after the timeout it advertises, so that a client's request sent just
    // before the advertised end does not meet a closing socket.
    const closedMs = await client.closed;
    t.ok(
      closedMs >= TIMEOUTS.keepAliveMs - EARLY_MS && closedMs < TIMEOUTS.keepAliveMs + 1000 + 400,
      `closed ${ms(closedMs)} after the last answer (keepAliveMs ${TIMEOUTS.keepAliveMs})`,
    );
  });

  t.test('50 clients trickling headers or bodies are all cut off on time while signed deliveries get 202 promptly', async (t) => {
    const receiver = await startShortReceiver(t, { headersMs: 1000, requestMs: 2000 });
    const slow = await Promise.all(Array.from({ length: 50 }, () => rawClient(t, receiver)));
    for (const [index, client] of slow.entries()) {
      const { head, body } = signedRequest(`slow-${index}`, `x-padding: ${'p'.repeat(400)}\r\n`);
      // Even ones trickle their headers; odd ones send their headers and trickle the body, a byte every 50 ms.
      if (index % 2 === 1) client.socket.write(head);
      t.teardown(trickle(client.socket, index % 2 === 0 ? head : body, 50));
    }
    const { statuses, latenciesMs } = await deliver(receiver, 40, 'beside-slow');
    t.same([...statuses], [202], 'every delivery acknowledged while 50 clients trickle');
    t.ok(latenciesMs.at(-1)! < 3000, `median ${ms(latenciesMs[20]!)}, slowest ${ms(latenciesMs.at(-1)!)}`);
    const closedMs = await Promise.all(slow.map((client) => client.closed));
    t.ok(
      slow.every((client) => /^HTTP\/1\.1 408 /.test(client.answer())),
      'each slow client is answered 408',
    );
    // Each is timed from its own connection, as the receiver times it; the receiver may see a connection a few
    // milliseconds before the client does, among 50 opened side by side.
    const headerClients = closedMs.filter((_, index) => index % 2 === 0);
    const bodyClients = closedMs.filter((_, index) => index % 2 === 1);
    t.ok(
      Math.min(...headerClients) >= 1000 - EARLY_MS && Math.max(...headerClients) < latest(1000),
      `header tricklers cut off after ${ms(Math.min(...headerClients))} to ${ms(Math.max(...headerClients))}`,
    );
    t.ok(
      Math.min(...bodyClients) >= 2000 - EARLY_MS && Math.max(...bodyClients) < latest(2000),
      `body tricklers cut off after ${ms(Math.min(...bodyClients))} to ${ms(Math.max(...bodyClients))}`,
    );
  });

  t.test('1,000 idle connections leave deliveries answered promptly, and are all closed once headersMs have passed', async (t) => {
    // Five seconds to open them all and deliver beside them, with the other tests of this file running too.
    const receiver = await startShortReceiver(t, { headersMs: 5000, requestMs: 5000, socketIdleMs: 8000 });
    const opened = performance.now();
    const idle = await Promise.all(Array.from({ length: 1000 }, () => rawClient(t, receiver)));
    const openedMs = performance.now() - opened;
    const { statuses, latenciesMs } = await deliver(receiver, 50, 'beside-idle');
    t.equal(idle.filter((client) => !client.socket.destroyed).length, 1000, 'the idle connections were all open meanwhile');
    t.same([...statuses], [202], 'every delivery acknowledged with 1,000 idle connections open');
    t.ok(latenciesMs.at(-1)! < 3000, `opened in ${ms(openedMs)}; median ${ms(latenciesMs[25]!)}, slowest ${ms(latenciesMs.at(-1)!)}`);
    const closedMs = await Promise.all(idle.map((client) => client.closed));
    t.ok(
      Math.max(...closedMs) < latest(5000),
      `each closed ${ms(Math.min(...closedMs))} to ${ms(Math.max(...closedMs))} after it was opened`,
    );
    t.equal(idle.filter((client) => /^HTTP\/1\.1 408 /.test(client.answer())).length, 1000, 'each answered 408');
  });

  t.test('bytes that are not HTTP, and headers over the limit, get the geohook error shape and a closed connection', async (t) => {
    const receiver = await startShortReceiver(t);
    for (const [request, answer] of [
      [
        'GARBAGE\r\n\r\n',
        /^HTTP\/1\.1 400 Bad Request\r\n[^]*\{"statusCode":400,"code":"GEOHOOK_ERR_BAD_REQUEST","error":"Bad Request","message":"malformed HTTP request"\}$/,
      ],
      [
        `POST /webhooks/default HTTP/1.1\r\nhost: x\r\nx-big: ${'b'.repeat(20_000)}\r\n\r\n`,
        /^HTTP\/1\.1 431 [^]*"code":"GEOHOOK_ERR_HEADERS_TOO_LARGE"/,
      ],
    ] as const) {
      const client = await rawClient(t, receiver);
      client.socket.write(request);
      await client.closed;
      t.match(client.answer(), answer);
    }
    t.equal((await fetch(`${receiver.url}/healthz`)).status, 200, 'the receiver is unharmed');
  });
});
