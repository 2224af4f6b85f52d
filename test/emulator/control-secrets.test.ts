import t from 'tap';
import { sign } from '../../src/signature/sign.js';
import { startEmulator } from '../helpers/emulator.js';
import { startSink, type SinkHandler } from '../helpers/http-sink.js';
import type { Json } from '../helpers/json.js';
import { waitFor } from '../helpers/wait.js';

// The control endpoints take no credentials: they show no signature key and no signature. The admin API,
// which takes a token, answers the key on reads as the product does.

const KEY = 'control-secrets-key-0123456789';

/** Answers Online's challenge-response check with `KEY`, and 200 to every delivery. */
const receiver: SinkHandler = (request, response) => {
  const token = new URL(request.url ?? '/', 'http://sink').searchParams.get('crc_token');
  if (token === null) return response.writeHead(200).end();
  response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ response_token: sign(KEY, token) }));
};

t.test('GET /emulator/webhooks says whether each webhook has a key, never the key; the admin API reads still answer it', async (t) => {
  const emulator = await startEmulator(t);
  const sink = await startSink(t, receiver);
  const hookUrl = `${sink.url}/webhooks/default`;
  const signed = await emulator.admin('services/Tools/Buffer.GPServer/webhooks/create', { name: 'signed', hookUrl, signatureKey: KEY });
  await emulator.admin('services/Tools/Buffer.GPServer/webhooks/create', { name: 'unsigned', hookUrl });
  const online = await fetch(`${emulator.url}/geohookOrg/ArcGIS/rest/admin/services/Parcels/FeatureServer/WebHooks/create`, {
    method: 'POST',
    body: new URLSearchParams({ name: 'online', hookUrl, signatureKey: KEY, token: await emulator.token(), f: 'json' }),
  });
  t.type(((await online.json()) as { globalId?: string }).globalId, 'string', 'the Online webhook passed its challenge');

  const response = await fetch(`${emulator.url}/emulator/webhooks`);
  const text = await response.text();
  t.notOk(text.includes(KEY), 'the key is nowhere in the answer');
  const { webhooks, onlineWebhooks } = JSON.parse(text) as { webhooks: Record<string, Json>[]; onlineWebhooks: Record<string, Json>[] };
  t.strictSame(
    webhooks.map((hook) => [hook.name, hook.hasSignatureKey, 'signatureKey' in hook]),
    [
      ['signed', true, false],
      ['unsigned', false, false],
    ],
  );
  t.match(onlineWebhooks, [{ name: 'online', hasSignatureKey: true }]);
  t.notOk('signatureKey' in onlineWebhooks[0]!);
  t.match(webhooks[0], { id: signed.id, hookUrl, active: false, failuresByDay: {} }, 'the rest of the record is shown');

  t.match(await emulator.admin(`services/Tools/Buffer.GPServer/webhooks/${String(signed.id)}`), { signatureKey: KEY }, 'webhooks/<id>');
  t.match(
    await emulator.admin('services/webhooks'),
    { webhooks: [{ name: 'signed', signatureKey: KEY }, { signatureKey: '' }] },
    'org-wide list',
  );
});

t.test('GET /emulator/deliveries names the header a signature was sent in, never its value', async (t) => {
  const emulator = await startEmulator(t);
  const sink = await startSink(t, receiver);
  await emulator.admin('services/Tools/Buffer.GPServer/webhooks/create', {
    name: 'signed',
    hookUrl: `${sink.url}/webhooks/default`,
    signatureKey: KEY,
    active: 'true',
  });
  await emulator.control('services/Tools/Buffer.GPServer/jobs', { outcome: 'succeeded' });
  await waitFor('the delivery', () => sink.received.length === 1);
  const signature = String(sink.received[0]!.headers['x-service']);
  t.match(signature, /^sha256=/, 'the delivery was signed');

  const text = await (await fetch(`${emulator.url}/emulator/deliveries`)).text();
  t.notOk(text.includes(signature), 'the signature is nowhere in the answer');
  t.notOk(text.includes(signature.slice('sha256='.length, 20)), 'nor a part of it');
  const { deliveries } = JSON.parse(text) as { deliveries: Record<string, Json>[] };
  t.match(deliveries, [{ signatureHeader: 'x-service', event: 'esriJobSucceeded' }]);
  t.notOk('signature' in deliveries[0]!);
});
