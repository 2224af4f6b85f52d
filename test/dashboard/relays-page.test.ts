import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import t from 'tap';
import { relayStatsKey } from '../../src/redis/keys.js';
import { relayQueueName } from '../../src/relay/relay-queues.js';
import { configFile, startReceiver, uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { changeUpdated, SECRET_A } from '../helpers/relay-events.js';

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
  // An event waiting for its retry: the page says when the route's next try is.
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  t.teardown(() => connection.disconnect());
  const waiting = new Queue(relayQueueName('parcels'), { connection, prefix });
  const retry = changeUpdated({ id: 'retry1' });
  const added = await waiting.add(retry.type, retry, { jobId: retry.id, delay: 3_600_000 });
  await waiting.close();
  const due = new Date(added.timestamp + 3_600_000)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, '');
  t.equal((await fetch(`${receiver.url}/ui/relays`, { redirect: 'manual' })).status, 302, 'no credentials: to the login page');
  const response = await fetch(`${receiver.url}/ui/relays`, { headers: { authorization: `Bearer ${TOKEN}` } });
  t.equal(response.status, 200);
  t.equal(response.headers.get('cache-control'), 'no-store');
  const body = await response.text();
  t.match(
    body,
    /<tr data-route="parcels"><td>parcels<\/td><td>standard<\/td><td data-column="delivered">12<\/td><td data-column="failing" class="bad">3<\/td>/,
  );
  t.match(body, `<td data-column="pending">1</td><td data-column="nextTryAt">${due}</td>`, 'when the next try is due');
  t.match(body, /answered 500 &lt;script&gt;alert\(1\)&lt;\/script&gt;/, 'the error escaped');
  t.notMatch(body, /<script/i, 'no script in the page');
  t.match(body, /<tr data-route="teams"><td>teams<\/td><td>teams<\/td><td data-column="delivered">0<\/td>/);
  t.notMatch(body, /not-shown|whsec_/, 'neither the URL nor the secret is shown');
  t.match(body, /<a href="\/ui\/relays">Relays<\/a>/, 'the menu links the page');
});

t.test(
  'issue 54: the relays view tries a route on its last events: the verdict and why, the headers redacted, the body escaped',
  async (t) => {
    const prefix = uniquePrefix();
    const relays = [
      {
        name: 'closed',
        // Nothing listens here: a try of the route fails, and its job stays in the queue to be tried.
        url: 'http://127.0.0.1:9/in',
        types: ['change.*'],
        secret: SECRET_A,
        headers: { authorization: 'Bearer not-for-your-eyes' },
        transform: '{"parcel": after.attributes.parcel_id, "owner": after.attributes.owner}',
      },
    ];
    const receiver = await startReceiver(t, redis, {
      DASHBOARD_TOKEN: TOKEN,
      GEOHOOK_PREFIX: prefix,
      GEOHOOK_CONFIG: configFile(t, { relays }),
    });
    const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
    t.teardown(() => connection.disconnect());
    const event = changeUpdated({ id: 'closed1', after: { attributes: { objectid: 1, parcel_id: 'P-1', owner: '<b>Ada</b>' } } });
    const queue = new Queue(relayQueueName('closed'), { connection, prefix });
    await queue.add(event.type, event, { jobId: event.id, delay: 3_600_000 });
    await queue.close();
    const page = async (path: string) => {
      const response = await fetch(`${receiver.url}/ui${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
      return { status: response.status, body: await response.text() };
    };

    t.match((await page('/relays')).body, /<td><a href="\/ui\/relays\/closed\/dry-run">Dry run<\/a><\/td>/);
    const list = await page('/relays/closed/dry-run');
    t.equal(list.status, 200);
    t.match(list.body, /<a href="\/ui\/relays\/closed\/dry-run\?id=closed1">closed1<\/a><\/td><td>change\.updated<\/td><td>delayed<\/td>/);
    const tried = await page('/relays/closed/dry-run?id=closed1');
    t.equal(tried.status, 200);
    t.match(tried.body, /<p id="verdict" class="ok"><strong>Taken<\/strong>: takes it: types change\.\* take change\.updated<\/p>/);
    t.match(tried.body, /<tr><td>webhook-signature<\/td><td class="wrap">v1,\(redacted\)<\/td><\/tr>/);
    t.match(tried.body, /<tr><td>authorization<\/td><td class="wrap">\(redacted\)<\/td><\/tr>/);
    t.match(
      tried.body,
      /<pre id="body">\{\n {2}&quot;parcel&quot;: &quot;P-1&quot;,\n {2}&quot;owner&quot;: &quot;&lt;b&gt;Ada&lt;\/b&gt;&quot;\n\}<\/pre>/,
    );
    t.notMatch(tried.body, /not-for-your-eyes|whsec_|<b>/, 'no credential, no markup of an edited value');
    t.equal((await page('/relays/nope/dry-run')).status, 404, 'a route that is not configured');
    t.match((await page('/relays/closed/dry-run?id=gone')).body, /GEOHOOK_ERR_RELAY_TEST_INPUT/);
    t.equal((await fetch(`${receiver.url}/ui/relays/closed/dry-run`, { redirect: 'manual' })).status, 302, 'behind the credentials');
  },
);
