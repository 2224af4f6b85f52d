import t from 'tap';
import { deliver } from '../../src/relay/deliver.js';
import { createRelayTransport } from '../../src/relay/relay-transport.js';
import { startSink } from '../helpers/http-sink.js';

const request = { headers: { 'content-type': 'application/json', 'webhook-id': 'e1' }, body: '{"type":"change.updated"}' };

t.test('the relay transport: a 2xx taken, headers and body sent as they are, connections kept', async (t) => {
  const transport = createRelayTransport();
  t.teardown(() => transport.close());
  const sockets = new Set<unknown>();
  const sink = await startSink(t, (incoming, response) => {
    sockets.add(incoming.socket);
    response.writeHead(204).end();
  });
  for (let n = 0; n < 10; n += 1)
    t.match(await deliver(`${sink.url}/in`, request, { fetch: transport.fetch }), { delivered: true, status: 204 });
  t.equal(sink.received[0]!.headers['webhook-id'], 'e1');
  t.equal(sink.received[0]!.body.toString(), request.body);
  t.ok(sockets.size < 5, `${sockets.size} connections for 10 tries: they are kept open`);
});

t.test('the relay transport: a redirect is not followed, Retry-After is read, a long body is cut, a slow route times out', async (t) => {
  const transport = createRelayTransport({ maxResponseBytes: 16 });
  t.teardown(() => transport.close());
  const sink = await startSink(t, (incoming, response) => {
    if (incoming.url === '/moved') return response.writeHead(302, { location: '/elsewhere' }).end();
    if (incoming.url === '/busy') return response.writeHead(503, { 'retry-after': '7' }).end();
    if (incoming.url === '/long') return response.writeHead(200).end('x'.repeat(1_000_000));
    setTimeout(() => response.writeHead(204).end(), 2000).unref();
  });
  t.match(await deliver(`${sink.url}/moved`, request, { fetch: transport.fetch }), { delivered: false, reason: 'redirect', status: 302 });
  t.equal(sink.received.filter((received) => received.url === '/elsewhere').length, 0, 'the redirect was not followed');
  t.match(await deliver(`${sink.url}/busy`, request, { fetch: transport.fetch }), { delivered: false, status: 503, retryAfterMs: 7000 });
  t.match(await deliver(`${sink.url}/long`, request, { fetch: transport.fetch }), { delivered: true, status: 200 });
  t.match(await deliver(`${sink.url}/slow`, request, { fetch: transport.fetch, timeoutMs: 200 }), { delivered: false, reason: 'timeout' });
  t.match(await deliver('http://127.0.0.1:1/none', request, { fetch: transport.fetch }), { delivered: false, reason: 'network' });
});
