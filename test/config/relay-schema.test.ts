import t, { type Test } from 'tap';
import { loadConfig } from '../../src/config/load-config.js';
import { ConfigError } from '../../src/errors.js';
import { SECRET_A } from '../helpers/relay-events.js';

const route = { name: 'parcels', url: 'https://hooks.example.com/parcels', types: ['change.*'], secret: SECRET_A };

/** The configuration of a GEOHOOK_CONFIG file holding `relays`. */
function withRelays(t: Test, relays: unknown[]) {
  const dir = t.testdir({ 'geohook.json': JSON.stringify({ relays }) });
  return () => loadConfig({ GEOHOOK_CONFIG: `${dir}/geohook.json` });
}

/** The message of the ConfigError loading `relays` throws. */
function refusal(t: Test, relays: unknown[]): string {
  try {
    withRelays(t, relays)();
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  throw new Error('the routes were accepted');
}

t.test('a route is read with its defaults; no relays by default', async (t) => {
  t.strictSame(loadConfig({}).relays, []);
  const [read] = withRelays(t, [route])().relays;
  t.match(read, { ...route, format: 'standard' });
});

t.test('a standard route needs a whsec_ secret, and the message names the route but never the secret', async (t) => {
  t.match(refusal(t, [{ ...route, secret: undefined }]), /route "parcels": a standard route needs a "whsec_" secret/);
  const message = refusal(t, [{ ...route, secret: 'whsec_c2hvcnQ=' }]);
  t.match(message, /route "parcels": secret\[0\] holds a 5-byte key/);
  t.notMatch(message, /c2hvcnQ/);
  t.match(refusal(t, [{ ...route, format: 'powerautomate', secret: 'short' }]), /route "parcels": secret must be 16 to 256 characters/);
  t.match(refusal(t, [{ ...route, format: 'teams' }]), /a teams route is not signed/);
});

t.test('a where geohook cannot read, a reserved header, a second route of a name and a bad pattern are refused', async (t) => {
  t.match(refusal(t, [{ ...route, where: "status = 'Closed" }]), /relays\[0\]\.where": not a where clause geohook reads/);
  t.match(refusal(t, [{ ...route, headers: { 'Webhook-Signature': 'v1,x' } }]), /headers cannot set "Webhook-Signature"/);
  t.match(
    refusal(t, [{ ...route, format: 'powerautomate', secret: 'a-shared-secret-of-24ch', headers: { 'x-geohook-secret': 'x' } }]),
    /cannot set "x-geohook-secret"/,
  );
  t.match(refusal(t, [{ ...route, headers: { 'content-type': 'text/plain' } }]), /cannot set "content-type"/);
  t.match(refusal(t, [route, route]), /route "parcels": a second route of this name/);
  t.match(refusal(t, [{ ...route, types: ['*'] }]), /patterns of change\., feature\. or gp\. events/);
  t.match(refusal(t, [{ ...route, name: 'a:b' }]), /relays\[0\]\.name/);
  t.match(refusal(t, [{ ...route, url: 'ftp://example.com' }]), /an http\(s\) URL/);
  t.match(refusal(t, [{ ...route, layers: [0] }]), /layers need services/);
});

t.test(
  'issue 54: a transform that is not JSONata is refused with the route, the line and column, and the reason JSONata gives',
  async (t) => {
    const [read] = withRelays(t, [{ ...route, transform: '{"status": after.attributes.status}' }])().relays;
    t.equal(read!.transform, '{"status": after.attributes.status}', 'a JSONata expression is taken as it is');
    const message = refusal(t, [{ ...route, transform: '{\n  "status": after.attributes.status,\n  "owner": )\n}' }]);
    t.match(message, /relays\[0\]\.transform": route "parcels": transform is not JSONata: .+ at line 3, column 12 \(JSONata S0211\)/);
    t.match(
      refusal(t, [{ ...route, transform: '{"a": 1' }]),
      /route "parcels": transform is not JSONata: Expected "}" .*at the end of the expression/,
    );
    t.match(refusal(t, [{ ...route, transform: '   ' }]), /relays\[0\]\.transform": a JSONata expression/);
    t.match(refusal(t, [{ ...route, transform: 'x'.repeat(20_001) }]), /relays\[0\]\.transform/);
  },
);

t.test('issue 54: a route with a transform may send a JSON content type of its own, and no other', async (t) => {
  const cloudEvents = { ...route, transform: '{"specversion": "1.0"}', headers: { 'Content-Type': 'application/cloudevents+json' } };
  t.match(withRelays(t, [cloudEvents])().relays[0]!.headers, { 'Content-Type': 'application/cloudevents+json' });
  t.match(refusal(t, [{ ...cloudEvents, headers: { 'content-type': 'text/html' } }]), /content-type "text\/html" is not a JSON media type/);
  t.match(
    refusal(t, [{ ...route, headers: { 'content-type': 'application/json' } }]),
    /cannot set "content-type": geohook sets it \(a route with a transform may\)/,
  );
});
