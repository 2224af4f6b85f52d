import { createServer } from 'node:net';
import t from 'tap';
import { deliver, deliveryError, parseRetryAfter, type DeliveryOutcome } from '../../src/relay/deliver.js';
import type { RelayRequest } from '../../src/relay/formats/relay-request.js';
import { answerWith, startSink } from '../helpers/http-sink.js';

const request: RelayRequest = { headers: { 'content-type': 'application/json', 'webhook-id': 'e1' }, body: '{"n":1}' };

const failed = (outcome: DeliveryOutcome) => {
  if (outcome.delivered) throw new Error(`delivered with ${outcome.status}`);
  return outcome;
};

t.test('a 2xx answer is delivered: one POST with the headers and the exact body', async (t) => {
  const sink = await startSink(t, answerWith(202));
  const outcome = await deliver(sink.url, request);
  t.match(outcome, { delivered: true, status: 202 });
  t.equal(sink.received.length, 1);
  t.equal(sink.received[0]!.method, 'POST');
  t.equal(sink.received[0]!.headers['webhook-id'], 'e1');
  t.equal(sink.received[0]!.body.toString(), '{"n":1}');
});

t.test('a redirect is a failure and is never followed', async (t) => {
  const target = await startSink(t, answerWith(200));
  const sink = await startSink(t, (_request, response) => response.writeHead(302, { location: target.url }).end());
  const outcome = failed(await deliver(sink.url, request));
  t.match(outcome, { reason: 'redirect', status: 302, clientError: false });
  t.equal(target.received.length, 0, 'the Location was not called');
});

t.test('a 500 is a failure to retry, not flagged', async (t) => {
  const sink = await startSink(t, answerWith(500));
  t.match(failed(await deliver(sink.url, request)), {
    reason: 'status',
    status: 500,
    clientError: false,
    gone: false,
    message: 'answered 500',
  });
});

t.test('a 4xx other than 408 and 429 is flagged as a client error; a 410 as gone', async (t) => {
  const statuses = new Map([
    [404, { clientError: true, gone: false }],
    [410, { clientError: true, gone: true }],
    [408, { clientError: false, gone: false }],
    [429, { clientError: false, gone: false }],
  ]);
  for (const [status, flags] of statuses) {
    const sink = await startSink(t, answerWith(status));
    t.match(failed(await deliver(sink.url, request)), { status, ...flags }, String(status));
  }
});

t.test('a 429 or 503 Retry-After is honoured, in seconds or as a date, and cut to the limit', async (t) => {
  const now = () => Date.parse('2026-01-01T00:00:00Z');
  const answers: [number, string, number | undefined][] = [
    [429, '7', 7000],
    [503, 'Thu, 01 Jan 2026 00:00:30 GMT', 30_000],
    [429, '999999', 60_000],
    [500, '7', undefined],
    [429, 'soon', undefined],
  ];
  for (const [status, retryAfter, expected] of answers) {
    const sink = await startSink(t, (_request, response) => response.writeHead(status, { 'retry-after': retryAfter }).end());
    const outcome = failed(await deliver(sink.url, request, { now, maxRetryAfterMs: 60_000 }));
    t.equal(outcome.retryAfterMs, expected, `${status} Retry-After: ${retryAfter}`);
  }
});

t.test('parseRetryAfter: no header, a past date, a bare number as a date', async (t) => {
  t.equal(parseRetryAfter(null, 0, 1000), undefined);
  t.equal(parseRetryAfter('Thu, 01 Jan 1970 00:00:00 GMT', 5000, 1000), 0);
  t.equal(parseRetryAfter('1.5', 0, 10_000), undefined);
});

t.test('a route that does not answer in time is a timeout', async (t) => {
  const sink = await startSink(t, () => undefined);
  const outcome = failed(await deliver(sink.url, request, { timeoutMs: 200 }));
  t.match(outcome, { reason: 'timeout', message: 'no answer within 200 ms' });
  t.ok(outcome.durationMs >= 150 && outcome.durationMs < 5000, `gave up after ${Math.round(outcome.durationMs)} ms`);
  t.notOk('status' in outcome);
});

t.test('a route that cannot be reached is a network failure', async (t) => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  t.match(failed(await deliver(`http://127.0.0.1:${port}/`, request)), { reason: 'network', message: /ECONNREFUSED/ });
});

t.test('no more than the cap of an answer body is read, and the rest is let go', async (t) => {
  let pulled = 0;
  let cancelled = false;
  const endless = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        pulled += 1;
        controller.enqueue(new Uint8Array(1024));
      },
      cancel() {
        cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  const fakeFetch = (async () => new Response(endless, { status: 200 })) as typeof fetch;
  const outcome = await deliver('http://relay.invalid/', request, { fetch: fakeFetch, maxResponseBytes: 4096 });
  t.match(outcome, { delivered: true, status: 200 });
  t.ok(pulled >= 4 && pulled <= 5, `${pulled} KiB read for a 4-KiB cap`);
  t.ok(cancelled, 'the body was cancelled');
});

t.test('a huge answer body from a real route does not hold the try', async (t) => {
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  const total = 1024 * chunk.length; // 64 MiB
  let written = 0;
  let closed!: Promise<void>;
  const sink = await startSink(t, (_request, response) => {
    closed = new Promise((resolve) => response.on('close', resolve));
    response.writeHead(500, { 'content-length': String(total) });
    const write = (): void => {
      while (written < total && !response.destroyed) {
        written += chunk.length;
        if (!response.write(chunk)) return void response.once('drain', write);
      }
      response.end();
    };
    write();
  });
  t.match(await deliver(sink.url, request, { timeoutMs: 10_000 }), { delivered: false, status: 500 });
  await closed;
  t.ok(written < total / 2, `the route wrote ${Math.round(written / 1024 / 1024)} MiB of 64 before the connection was let go`);
});

t.test('a failed try becomes a RelayDeliveryError with its status and Retry-After', async (t) => {
  const err = deliveryError({
    delivered: false,
    reason: 'status',
    status: 429,
    retryAfterMs: 7000,
    clientError: false,
    gone: false,
    message: 'answered 429',
    durationMs: 1,
  });
  t.equal(err.code, 'GEOHOOK_ERR_RELAY_DELIVERY');
  t.equal(err.statusCode, 502);
  t.equal(err.status, 429);
  t.equal(err.retryAfterMs, 7000);
  t.equal(err.message, 'answered 429');
  const unreached = deliveryError({ delivered: false, reason: 'network', clientError: false, gone: false, message: 'x', durationMs: 1 });
  t.equal(unreached.status, undefined);
  t.equal(unreached.retryAfterMs, undefined);
});
