import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pino from 'pino';
import t, { type Test } from 'tap';
import { createServiceLocator } from '../../src/arcgis/service-locator.js';
import { changesQueueName } from '../../src/changes/change-queues.js';
import { recordFailedRange } from '../../src/changes/failed-ranges.js';
import { startChanges } from '../../src/changes/start-changes.js';
import type { Alert } from '../../src/health/alert-sender.js';
import { changesPendingKey, changesPreviousKey, changesResolvedKey, serverGensKey, watermarksKey } from '../../src/redis/keys.js';
import { PARCELS } from '../helpers/edits.js';
import { startEmulator } from '../helpers/emulator.js';
import { startReceiver, uniquePrefix, type TestReceiver } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const TOKEN = 'dashboard-token-0123456789';
const BEARER = { authorization: `Bearer ${TOKEN}` };

const redis = await startRedis(t);

/** A client of the test's Redis, disconnected at teardown. */
function rawRedis(t: Test): Redis {
  const client = new Redis(redis.url, { maxRetriesPerRequest: null });
  t.teardown(() => client.disconnect());
  return client;
}

/** A receiver with the dashboard on `prefix`. */
const dashboardOn = (t: Test, prefix = uniquePrefix()): Promise<TestReceiver> =>
  startReceiver(t, redis, { DASHBOARD_TOKEN: TOKEN, GEOHOOK_PREFIX: prefix });

async function changesPage(receiver: TestReceiver, headers: Record<string, string> = BEARER) {
  const response = await fetch(`${receiver.url}/ui/changes`, { headers, redirect: 'manual' });
  return { status: response.status, headers: response.headers, body: await response.text() };
}

/** The text of a cell of the row `data-<kind>="<key>"` (escaped as the page writes it). */
function cell(body: string, row: string, column: string): string | undefined {
  const tr = new RegExp(`<tr ${row}>(.*?)</tr>`).exec(body)?.[1];
  return tr === undefined ? undefined : new RegExp(`<td data-column="${column}"[^>]*>([^<]*)</td>`).exec(tr)?.[1];
}

t.test('the changes view needs the credentials, is never framed, and says when no service is followed', async (t) => {
  const receiver = await dashboardOn(t);
  const anonymous = await changesPage(receiver, {});
  t.equal(anonymous.status, 302);
  t.equal(anonymous.headers.get('location'), '/ui/login');
  const page = await changesPage(receiver);
  t.equal(page.status, 200);
  t.match(page.headers.get('content-type'), /^text\/html/);
  t.equal(page.headers.get('cache-control'), 'no-store');
  t.match(page.headers.get('content-security-policy'), /^default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'$/);
  t.equal(page.headers.get('x-frame-options'), 'DENY');
  t.match(page.body, /<p class="empty">Not following any service: change events are off\./);
  t.notMatch(page.body, /<script/i, 'no script in the page');
  t.notMatch(page.body, /<table id="scopes">/);
  t.match(page.body, /<a href="\/ui\/changes">Change events<\/a>/, 'the menu links the page');
  const services = await fetch(`${receiver.url}/ui/services`, { headers: BEARER });
  t.match(await services.text(), /<a href="\/ui\/changes">Change events<\/a>/, 'the services page links it too');
});

t.test('each followed scope: generations, the range being resolved, its jobs in flight, the previous values, the queues', async (t) => {
  const prefix = uniquePrefix();
  const raw = rawRedis(t);
  const enterprise = `default ${PARCELS}`;
  const online = ['default Hosted/Trees.FeatureServer#0', 'default Hosted/Trees.FeatureServer#2'];
  await raw.hset(changesResolvedKey(prefix), { [enterprise]: '120', [online[0]!]: '1795758549350', [online[1]!]: '1795758549000' });
  await raw.hset(watermarksKey(prefix), { [enterprise]: '130', [online[0]!]: '1795758549412' });
  await raw.hset(serverGensKey(prefix), enterprise, '131\thttps://gis.example.com/arcgis/rest/services/Hosted/Parcels/FeatureServer');
  const claimedAt = Date.parse('2026-11-27T06:03:04.000Z');
  await raw.hset(changesPendingKey(prefix), enterprise, `120\t130\t${claimedAt}`);
  // Two features of layer 0 (one with its GlobalID) and one of table 1: three kept.
  await raw.hset(changesPreviousKey(prefix, `${enterprise}#0`), { '1': 'a', '2': 'b', 'g:{4F95}': '2' });
  await raw.hset(changesPreviousKey(prefix, `${enterprise}#1`), { '7': 'c' });
  const ranges = new Queue(changesQueueName, { connection: raw, prefix });
  t.teardown(() => ranges.close());
  await ranges.add('resolve', { hook: 'default', scope: enterprise, serviceUrl: 'x', from: 120, to: 130 });
  await ranges.add(
    'resolve',
    { hook: 'default', scope: enterprise, serviceUrl: 'x', from: 100, to: 110, origin: 'replay' },
    { delay: 60_000 },
  );

  const receiver = await dashboardOn(t, prefix);
  const { status, body } = await changesPage(receiver);
  t.equal(status, 200);
  const row = `data-scope="${enterprise}"`;
  t.equal(cell(body, row, 'resolvedGen'), '120');
  t.equal(cell(body, row, 'watermark'), '130');
  t.equal(cell(body, row, 'serverGen'), '131', 'the server generation, without its URL');
  t.equal(cell(body, row, 'pending'), '(120, 130] since 2026-11-27 06:03:04');
  t.equal(cell(body, row, 'jobs'), '2', 'a range waiting and a replay delayed');
  t.equal(cell(body, row, 'previousValues'), '3', 'features, not their GlobalID index');
  t.equal(cell(body, row, 'lastError'), '');
  const layer = `data-scope="${online[0]}"`;
  t.match(
    body,
    new RegExp(`<tr ${layer}><td rowspan="2">Hosted/Trees\\.FeatureServer</td><td>layer 0</td>`),
    'an Online service: a row per layer',
  );
  t.equal(cell(body, layer, 'resolvedGen'), '1795758549350 (2026-11-27 05:49:09)', 'a generation that reads as a time says it');
  t.equal(cell(body, layer, 'serverGen'), '', 'no server generation known');
  t.equal(cell(body, `data-scope="${online[1]}"`, 'watermark'), '');
  t.equal(cell(body, 'data-queue="change-ranges"', 'waiting'), '1');
  t.equal(cell(body, 'data-queue="change-ranges"', 'delayed'), '1');
  t.equal(cell(body, 'data-queue="change-events"', 'waiting'), '0');
  t.match(body, /<h2>Failed ranges<\/h2><p class="empty">No range has failed\.<\/p>/);
});

t.test('issue 38: a range the server refuses is shown failed, with its error, when, and the command that replays it', async (t) => {
  const emulator = await startEmulator(t);
  const prefix = uniquePrefix();
  const connection = rawRedis(t);
  // The server refuses every extractChanges, as one that no longer keeps the history would.
  const refusing: typeof fetch = async (input, init) =>
    String(input).includes('/extractChanges')
      ? Response.json({ error: { code: 400, message: 'Unable to complete operation.', details: ['history no longer kept'] } })
      : fetch(input, init);
  const alerts: Alert[] = [];
  const changes = startChanges({
    connection,
    prefix,
    hook: 'default',
    adminUrl: emulator.baseUrl,
    services: [PARCELS],
    track: [],
    auth: { token: await emulator.token() },
    serviceLocator: createServiceLocator({ adminUrl: emulator.baseUrl }),
    dedupMs: 60_000,
    jobOptions: {},
    logger: pino({ level: 'silent' }),
    fetch: refusing,
    alert: async (alert) => void alerts.push(alert),
  });
  t.teardown(() => changes.close());
  await waitFor('followed', () => changes.notReadyReason() === undefined);
  const scope = `default ${PARCELS}`;
  const from = Number(await connection.hget(changesResolvedKey(prefix), scope));
  await connection.hset(watermarksKey(prefix), scope, String(from + 10));
  await waitFor('the alert', () => alerts.length > 0);
  await waitFor('the scope released', async () => (await connection.hexists(changesPendingKey(prefix), scope)) === 0);

  const receiver = await dashboardOn(t, prefix);
  const { body } = await changesPage(receiver);
  const failed = new RegExp(`<tr data-failed="${scope}">(.*?)</tr>`).exec(body)?.[1];
  t.ok(failed, 'the failed range is listed');
  t.match(failed, `<td>(${from}, ${from + 10}]</td>`);
  t.match(failed, /<td class="bad wrap">[^<]*history no longer kept[^<]*<\/td>/);
  t.match(failed, /<td>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d<\/td>/, 'when it failed');
  t.match(
    failed,
    `<code>geohook changes replay --service ${PARCELS} --from-gen ${from} --to-gen ${from + 10}</code>`,
    'the command that resolves it again',
  );
  t.match(cell(body, `data-scope="${scope}"`, 'lastError'), new RegExp(`^\\(${from}, ${from + 10}\\] at `));
  t.match(body, /<h2>Failed ranges \(1\)<\/h2>/);
});

t.test('every value is escaped: a service named <script>, an error with markup, a layer scope of ArcGIS Online', async (t) => {
  const prefix = uniquePrefix();
  const raw = rawRedis(t);
  const service = `<script>alert(1)</script>/It's "x".FeatureServer`;
  const scope = `default ${service}#3`;
  await raw.hset(changesResolvedKey(prefix), scope, '5');
  await raw.hset(watermarksKey(prefix), scope, '<b>9</b>');
  await recordFailedRange(raw, prefix, scope, {
    from: 1,
    to: 5,
    error: '<img src=x onerror=alert(2)> & more',
    at: '2026-11-27T06:03:04.120Z',
  });
  const receiver = await dashboardOn(t, prefix);
  const { status, body } = await changesPage(receiver);
  t.equal(status, 200);
  t.notMatch(body, /<script>alert|<img src=x|<b>9/, 'no markup of the values reaches the page');
  t.match(body, `<td rowspan="1">&lt;script&gt;alert(1)&lt;/script&gt;/It&#39;s &quot;x&quot;.FeatureServer</td>`);
  t.match(body, `data-failed="default &lt;script&gt;alert(1)&lt;/script&gt;/It&#39;s &quot;x&quot;.FeatureServer#3"`);
  t.match(body, '<td class="bad wrap">&lt;img src=x onerror=alert(2)&gt; &amp; more</td>');
  t.match(
    body,
    `<code>geohook changes replay --service &#39;&lt;script&gt;alert(1)&lt;/script&gt;/It&#39;\\&#39;&#39;s &quot;x&quot;.FeatureServer&#39; --layer 3 --from-gen 1 --to-gen 5</code>`,
    'the service quoted for the shell, then escaped for the page',
  );
});

t.test('a record another writer left unreadable is shown as such, not a failed page', async (t) => {
  const prefix = uniquePrefix();
  const raw = rawRedis(t);
  const scope = `default ${PARCELS}`;
  await raw.hset(changesResolvedKey(prefix), scope, '5');
  await raw.hset(`${prefix}:changes:failed`, scope, '{not json');
  const receiver = await dashboardOn(t, prefix);
  const { status, body } = await changesPage(receiver);
  t.equal(status, 200);
  t.match(body, /<td class="bad wrap">unreadable record: \{not json<\/td>/);
  t.notMatch(body, /geohook changes replay/, 'and no command to replay a range it cannot name');
});
