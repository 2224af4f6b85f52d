import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import type { AdminClient } from '../../src/admin/types.js';
import type { Webhook } from '../../src/arcgis/webhook.js';
import { roundTrip } from '../../src/doctor/round-trip.js';

/** A loopback server answering every request with `status` and `headers`; `hits` counts the requests it got. */
async function server(t: Test, status: number, headers: Record<string, string> = {}): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  const http: Server = createServer((request, reply) => {
    hits += 1;
    request.resume();
    request.on('end', () => reply.writeHead(status, headers).end());
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => http.close(() => resolve())));
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`, hits: () => hits };
}

t.test('issue 51 (I2): doctor does not follow a redirect of the hookUrl with its signed delivery, and says so', async (t) => {
  const target = await server(t, 202);
  const hook = await server(t, 307, { location: `${target.url}/stolen/webhooks/default?x=1` });
  const webhook = { id: 'w1', name: 'geohook', hookUrl: `${hook.url}/webhooks/default`, signatureKey: 'the-webhook-key' } as Webhook;
  const result = await roundTrip({
    client: { product: 'enterprise' } as AdminClient,
    service: 'Hosted/Parcels.FeatureServer',
    webhook,
    signatureHeader: 'x-esriHook-Signature',
    lastPing: () => Promise.resolve(undefined),
    timeoutMs: 0,
  });
  t.equal(hook.hits(), 1, 'the hookUrl got the delivery');
  t.equal(target.hits(), 0, 'the redirect target got nothing');
  t.match(result, { ok: false, via: 'signed', status: 307, recorded: false });
  t.match(result.message, `answered 307, a redirect to ${target.url}/stolen/webhooks/default (not followed)`);
});
