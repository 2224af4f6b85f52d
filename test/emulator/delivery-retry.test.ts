import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import type { BuiltPayload } from '../../src/emulator/delivery/build-payload.js';
import { deliver, type RetrySettings } from '../../src/emulator/delivery/deliver.js';
import { httpTransport } from '../../src/emulator/delivery/post-hook.js';
import type { DeliveryRecord } from '../../src/emulator/types.js';
import { startSink, type SinkHandler } from '../helpers/http-sink.js';

type Handler = SinkHandler;

/** A sink at `/hook` whose request bodies are collected. */
async function startServer(t: Test, handler: Handler): Promise<{ url: string; bodies: Buffer[] }> {
  const sink = await startSink(t, handler);
  return {
    url: `${sink.url}/hook`,
    get bodies() {
      return sink.received.map((request) => request.body);
    },
  };
}

const answer =
  (status: number): Handler =>
  (_request, response) =>
    response.writeHead(status).end();
const payload: BuiltPayload = {
  body: Buffer.from('{"n":1}'),
  contentType: 'application/json',
  eventType: 'FeaturesCreated',
  signature: 'sha256=abc',
  signatureHeader: 'x-service',
};
const settings = (fields: Partial<RetrySettings> = {}): RetrySettings => ({
  notificationAttempts: 3,
  notificationTimeOutInSeconds: 10,
  notificationElapsedTimeInSeconds: 5,
  ...fields,
});
const transport = httpTransport();
t.teardown(() => transport.close());
const { post } = transport;
/** Waits between attempts skipped; per-attempt timeouts stay real (10 s) so a slow first connection cannot fail a test. */
const fast = { post, sleep: async (): Promise<void> => undefined };

function recordFor(url: string): DeliveryRecord {
  return {
    id: 'd1',
    webhookId: 'w1',
    hookUrl: url,
    event: 'FeaturesCreated',
    contentType: 'application/json',
    attempts: [],
    outcome: 'pending',
  };
}

t.test('a receiver that fails twice then answers 202 gets the delivery on the third attempt', async (t) => {
  let calls = 0;
  const server = await startServer(t, (request, response) => answer(++calls < 3 ? 503 : 202)(request, response, Buffer.alloc(0)));
  const record = await deliver(recordFor(server.url), payload, settings(), fast);
  t.equal(record.outcome, 'delivered');
  t.same(
    record.attempts.map((attempt) => attempt.statusCode),
    [503, 503, 202],
  );
  t.same(server.bodies.map(String), ['{"n":1}', '{"n":1}', '{"n":1}'], 'the same bytes every time');
});

t.test('a receiver that always answers 500 fails after exactly notificationAttempts attempts', async (t) => {
  const server = await startServer(t, answer(500));
  const record = await deliver(recordFor(server.url), payload, settings({ notificationAttempts: 4 }), fast);
  t.equal(record.outcome, 'failed');
  t.same(
    record.attempts.map((attempt) => attempt.statusCode),
    [500, 500, 500, 500],
  );
  t.equal(server.bodies.length, 4);
});

t.test('a receiver that never answers fails each attempt with a timeout', async (t) => {
  const server = await startServer(t, () => undefined);
  const options = { ...fast, secondsToMs: (seconds: number) => seconds * 20 };
  const record = await deliver(
    recordFor(server.url),
    payload,
    settings({ notificationAttempts: 2, notificationTimeOutInSeconds: 3 }),
    options,
  );
  t.equal(record.outcome, 'failed');
  t.equal(record.attempts.length, 2);
  for (const attempt of record.attempts) {
    t.equal(attempt.statusCode, undefined);
    t.equal(attempt.error, 'timeout: no answer within 3 s');
  }
});

t.test('a refused connection is a failed attempt with the network error', async (t) => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const { port } = closed.address() as AddressInfo;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const record = await deliver(recordFor(`http://127.0.0.1:${port}/hook`), payload, settings({ notificationAttempts: 2 }), fast);
  t.equal(record.outcome, 'failed');
  t.same(
    record.attempts.map((attempt) => attempt.error),
    ['network error: ECONNREFUSED', 'network error: ECONNREFUSED'],
  );
});

t.test('a redirect is not followed and counts as a failed attempt', async (t) => {
  const target = await startServer(t, answer(200));
  const server = await startServer(t, (_request, response) => response.writeHead(302, { location: target.url }).end());
  const record = await deliver(recordFor(server.url), payload, settings({ notificationAttempts: 1 }), fast);
  t.equal(record.outcome, 'failed');
  t.same(
    record.attempts.map((attempt) => attempt.statusCode),
    [302],
  );
  t.equal(target.bodies.length, 0);
});

t.test('failed attempts are notificationElapsedTimeInSeconds apart and a success waits no more', async (t) => {
  let calls = 0;
  const server = await startServer(t, (request, response) => answer(++calls < 3 ? 500 : 200)(request, response, Buffer.alloc(0)));
  const waits: number[] = [];
  const sleep = async (ms: number): Promise<void> => {
    waits.push(ms);
  };
  // The waits are recorded, not slept; the same conversion gives each attempt its timeout, so it stays generous.
  const secondsToMs = (seconds: number): number => seconds * 1000 + 1;
  const record = await deliver(recordFor(server.url), payload, settings({ notificationAttempts: 5, notificationElapsedTimeInSeconds: 7 }), {
    post,
    sleep,
    secondsToMs,
  });
  t.equal(record.outcome, 'delivered');
  t.same(waits, [7001, 7001], 'one wait after each failed attempt, in secondsToMs');
});

t.test('the attempts carry the injected clock time, the content type and the signature header', async (t) => {
  const seen: IncomingMessage[] = [];
  const server = await startServer(t, (request, response) => {
    seen.push(request);
    response.writeHead(204).end();
  });
  const record = await deliver(recordFor(server.url), payload, settings(), { post, now: () => 1234 });
  t.same(record.attempts, [{ at: 1234, statusCode: 204 }]);
  t.equal(seen[0]?.method, 'POST');
  t.equal(seen[0]?.headers['content-type'], 'application/json');
  t.equal(seen[0]?.headers['content-length'], '7', 'the length of the body, not chunked');
  t.equal(seen[0]?.headers['x-service'], 'sha256=abc');
  const unsigned = await startServer(t, (request, response) => {
    seen.push(request);
    response.writeHead(200).end();
  });
  const { signature: _signature, ...withoutSignature } = payload;
  await deliver(recordFor(unsigned.url), withoutSignature, settings(), { post });
  t.notOk('x-service' in (seen[1]?.headers ?? {}), 'no header without a key');
});

t.test('aborting the signal ends the delivery as failed without more attempts', async (t) => {
  const server = await startServer(t, answer(500));
  const controller = new AbortController();
  const sleep = (_ms: number, signal: AbortSignal): Promise<void> => {
    controller.abort();
    return Promise.reject(signal.reason);
  };
  const record = await deliver(recordFor(server.url), payload, settings({ notificationAttempts: 5 }), {
    post,
    sleep,
    signal: controller.signal,
  });
  t.equal(record.outcome, 'failed');
  t.equal(record.attempts.length, 1);
});

t.test('deliveries to one receiver reuse a kept-alive connection', async (t) => {
  const ports = new Set<number | undefined>();
  const server = await startServer(t, (request, response) => {
    ports.add(request.socket.remotePort);
    response.writeHead(200).end('a body the emulator does not read');
  });
  for (let n = 0; n < 3; n += 1) t.equal((await deliver(recordFor(server.url), payload, settings(), fast)).outcome, 'delivered');
  t.equal(ports.size, 1, 'three deliveries, one connection');
});
