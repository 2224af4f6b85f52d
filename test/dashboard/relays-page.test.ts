import { Redis } from 'ioredis';
import t from 'tap';
import { relayStatsKey } from '../../src/redis/keys.js';
import { configFile, startReceiver, uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { SECRET_A } from '../helpers/relay-events.js';

const TOKEN = 'dashboard-token-0123456789';
const redis = await startRedis(t);

t.test('the relays view: each route counts, its last error escaped, the replay command; behind the credentials', async (t) => {
  const prefix = uniquePrefix();
  const relays = [
    { name: 'parcels', url: 'https://hooks.example.com/in?sig=not-shown', types: ['change.*'], secret: SECRET_A },
    { name: 'teams', url: 'https://example.webhook.office.com/x', types: ['change.*'], format: 'teams' },
  ];
  const receiver = await startReceiver(t, redis, {
    DASHBOARD_TOKEN: TOKEN,
    GEOHOOK_PREFIX: prefix,
    GEOHOOK_CONFIG: configFile(t, { relays }),
  });
  const raw = new Redis(redis.url);
  t.teardown(() => raw.disconnect());
  await raw.hset(relayStatsKey(prefix, 'parcels'), {
    delivered: 12,
    failing: 3,
    lastError: 'answered 500 <script>alert(1)</script>',
    lastErrorAt: '2026-11-27T10:00:00.000Z',
  });
  t.equal((await fetch(`${receiver.url}/ui/relays`, { redirect: 'manual' })).status, 302, 'no credentials: to the login page');
  const response = await fetch(`${receiver.url}/ui/relays`, { headers: { authorization: `Bearer ${TOKEN}` } });
  t.equal(response.status, 200);
  t.equal(response.headers.get('cache-control'), 'no-store');
  const body = await response.text();
  t.match(
    body,
    /<tr data-route="parcels"><td>parcels<\/td><td>standard<\/td><td data-column="delivered">12<\/td><td data-column="failing" class="bad">3<\/td>/,
  );
  t.match(body, /answered 500 &lt;script&gt;alert\(1\)&lt;\/script&gt;/, 'the error escaped');
  t.notMatch(body, /<script/i, 'no script in the page');
  t.match(body, /<tr data-route="teams"><td>teams<\/td><td>teams<\/td><td data-column="delivered">0<\/td>/);
  t.notMatch(body, /not-shown|whsec_/, 'neither the URL nor the secret is shown');
  t.match(body, /<a href="\/ui\/relays">Relays<\/a>/, 'the menu links the page');
});
