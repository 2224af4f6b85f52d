import { createServer, type Server } from 'node:http';
import { applyEdits } from '@esri/arcgis-rest-feature-service';
import { ApiKeyManager } from '@esri/arcgis-rest-request';
import { Webhook } from 'standardwebhooks';
import t, { type Test } from 'tap';
import { findFreePort } from '../../src/embedded/redis-server.js';
import type { RelayRouteStatus } from '../../src/relay/relay-status.js';
import { runCli } from '../helpers/cli.js';
import { PARCELS } from '../helpers/edits.js';
import { startEmulator, type TestEmulator } from '../helpers/emulator.js';
import { registrationEnv, startGeohook } from '../helpers/geohook.js';
import { startSink } from '../helpers/http-sink.js';
import { configFile, uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { SECRET_A } from '../helpers/relay-events.js';
import { waitFor } from '../helpers/wait.js';

const redis = await startRedis(t);
const webhook = new Webhook(SECRET_A);

/** Adds `count` parcels to the emulator's Parcels layer 0. */
async function addParcels(emulator: TestEmulator, count: number): Promise<void> {
  await applyEdits({
    url: `${emulator.url}/arcgis/rest/services/Hosted/Parcels/FeatureServer/0`,
    authentication: ApiKeyManager.fromKey(await emulator.token()),
    adds: Array.from({ length: count }, (_, index) => ({ attributes: { parcel_id: `P${index}`, status: 'Open' } })),
  });
}

/** geohook following Parcels with `relays`, and `geohook relay …` run against it. */
async function setUp(t: Test, relays: unknown[], extra: Record<string, string> = {}) {
  const emulator = await startEmulator(t);
  const prefix = uniquePrefix();
  const env = { ...registrationEnv(emulator, [PARCELS], prefix), CHANGES: PARCELS, GEOHOOK_CONFIG: configFile(t, { relays }), ...extra };
  const geohook = await startGeohook(t, redis, env);
  await waitFor('registered', async () => (await geohook.readyz()).status === 200);
  const cliEnv = { ...env, REDIS_URL: redis.url };
  const relay = async (...args: string[]): Promise<unknown> => {
    const result = await runCli(['relay', ...args], { env: cliEnv });
    if (result.code !== 0) throw new Error(`geohook relay ${args.join(' ')}: ${result.code}\n${result.stderr}`);
    return JSON.parse(result.stdout) as unknown;
  };
  const status = async (name: string): Promise<RelayRouteStatus> =>
    ((await relay('status', '--json')) as { routes: RelayRouteStatus[] }).routes.find((route) => route.name === name)!;
  const metrics = async (): Promise<string> => (await fetch(`${geohook.url}/metrics`)).text();
  return { emulator, relay, status, metrics, log: geohook.log };
}

/** The messages of the relay lines of `route` at `level` (40 warn, 30 info) in the JSON log, those matching `only` when given. */
function linesOf(log: string, route: string, level: number, only?: RegExp): string[] {
  return log
    .split('\n')
    .map((line) => JSON.parse(line) as { level: number; component?: string; route?: string; msg: string })
    .filter((line) => line.level === level && line.component === 'relay' && line.route === route)
    .map((line) => line.msg)
    .filter((msg) => (only === undefined ? !/dead letter/.test(msg) : only.test(msg)));
}

const quickRetry = (attempts: number, delayMs: number) => ({ attempts, backoff: { type: 'fixed', delayMs, jitter: 0 } });

t.test(
  'a sink answering 500: each event a dead letter after the schedule, one alert, replayed once the sink is fixed; 410 Gone: after one try',
  async (t) => {
    const alerts = await startSink(t, (_request, response) => response.writeHead(204).end());
    let answer = 500;
    const accepted: string[] = [];
    const replayMarks: (string | undefined)[] = [];
    const sink = await startSink(t, (request, response, body) => {
      replayMarks.push(request.headers['geohook-replayed-at'] as string | undefined);
      if (answer === 204) {
        webhook.verify(body.toString('utf8'), request.headers as Record<string, string>);
        accepted.push(String(request.headers['webhook-id']));
      }
      response.writeHead(answer).end();
    });
    const gone = await startSink(t, (_request, response) => response.writeHead(410).end());
    const { emulator, relay, status, metrics, log } = await setUp(
      t,
      [
        { name: 'sick', url: sink.url, types: ['change.*'], secret: SECRET_A, retry: quickRetry(3, 50) },
        { name: 'gone', url: gone.url, types: ['change.*'], secret: SECRET_A, retry: quickRetry(3, 50) },
      ],
      { ALERT_URL: alerts.url, ALERT_DEBOUNCE_SECONDS: '0' },
    );
    await addParcels(emulator, 2);
    // The tries in a row are counted in memory and written a few times a second: wait for them as well.
    const dead = await waitFor('2 dead letters and their tries counted', async () => {
      const route = await status('sick');
      return route.deadLetters === 2 && route.pending === 0 && route.failing >= 6 && route;
    });
    t.match(dead, { delivered: 0, failing: 6, lastError: 'answered 500' }, 'three tries each, every one failed');
    t.equal(sink.received.length, 6, 'no try after the last');
    const goneRoute = await waitFor('the 410 route: 2 dead letters', async () => {
      const route = await status('gone');
      return route.deadLetters === 2 && route.pending === 0 && route;
    });
    t.match(goneRoute, { delivered: 0, lastError: /answered 410/ });
    t.equal(gone.received.length, 2, '410 Gone: one try per event, none after it');
    const text = await metrics();
    t.match(text, /geohook_relay_tries_total\{route="sick",outcome="status"\} 6/);
    t.match(text, /geohook_relay_dead_letters_total\{route="sick"\} 2/);
    t.match(text, /geohook_relay_dead_letters_total\{route="gone"\} 2/);
    const alertsOf = (route: string) =>
      alerts.received.map((alert) => JSON.parse(alert.body.toString('utf8')) as { route: string }).filter((alert) => alert.route === route);
    await waitFor('the alert', () => alertsOf('sick').length > 0);
    t.equal(alertsOf('sick').length, 1, 'one alert for the episode, not one per dead letter');
    t.match(alertsOf('sick')[0], { event: 'relay.failing', route: 'sick', text: /relay route sick/ });
    // Issue 53: one line when the route starts failing and one for its first dead letter, not one per try.
    t.same(linesOf(log(), 'sick', 40), [
      'route sick failing: answered 500; its events wait for their next try (geohook relay status shows when)',
    ]);
    t.match(linesOf(log(), 'sick', 40, /dead letter/), [
      /^route sick: an event used its 3 tries and is a dead letter \(geohook relay replay --name sick/,
    ]);
    t.equal(linesOf(log(), 'sick', 40, /dead letter/).length, 1, 'the second dead letter is counted, not printed');

    answer = 204;
    const replayed = (await relay('replay', '--name', 'sick')) as { replayed: number; ids: string[] };
    t.equal(replayed.replayed, 2);
    await waitFor('both delivered', () => accepted.length >= 2);
    t.same([...accepted].sort(), [...replayed.ids].sort(), 'each dead letter delivered once, under its event id');
    // Issue 53: a replayed try says so in a header of its own; the tries before it did not.
    t.same(replayMarks.slice(0, 6), Array(6).fill(undefined), 'the first tries are not marked');
    t.match(replayMarks.slice(6), [/^\d{4}-\d\d-\d\dT.*Z$/, /^\d{4}-\d\d-\d\dT.*Z$/], 'the replayed tries carry geohook-replayed-at');
    const healed = await waitFor('counts written', async () => {
      const route = await status('sick');
      return route.delivered === 2 && route;
    });
    t.match(healed, { deadLetters: 0, failing: 0, pending: 0 });
    t.same(linesOf(log(), 'sick', 30, /delivers again/), ['route sick delivers again (after 6 failed tries, 2 dead letters)']);
    await t.rejects(relay('replay', '--name', 'sick', '--id', 'not-a-dead-letter'), /is not a dead letter of route "sick"/);
  },
);

t.test('a sink down, then up: every event delivered, none twice by webhook-id', async (t) => {
  const port = await findFreePort();
  const { emulator, status, log } = await setUp(t, [
    { name: 'later', url: `http://127.0.0.1:${port}/in`, types: ['change.*'], secret: SECRET_A, retry: quickRetry(100, 2000) },
  ]);
  await addParcels(emulator, 20);
  const down = await waitFor('tries refused', async () => {
    const route = await status('later');
    return route.failing >= 20 && route;
  });
  t.match(down, { delivered: 0, lastError: /could not reach the route/ });
  // Issue 53: when the next try is, and the failing route said once however many tries failed.
  const nextTryAt = Date.parse(down.nextTryAt ?? '');
  t.ok(nextTryAt > Date.now() - 2000 && nextTryAt < Date.now() + 5000, `the next try is due within the 2 s schedule (${down.nextTryAt})`);
  t.match(linesOf(log(), 'later', 40), [/^route later failing: could not reach the route: .*ECONNREFUSED/]);
  t.equal(linesOf(log(), 'later', 40).length, 1, 'one line for 20 and more failed tries');

  const delivered: string[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      webhook.verify(Buffer.concat(chunks).toString('utf8'), request.headers as Record<string, string>);
      delivered.push(String(request.headers['webhook-id']));
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  await waitFor('20 events delivered', () => delivered.length >= 20);
  const route = await waitFor('counts written', async () => {
    const read = await status('later');
    return read.delivered === 20 && read;
  });
  t.equal(new Set(delivered).size, 20, '20 events');
  t.equal(delivered.length, 20, 'none twice');
  t.match(route, { failing: 0, deadLetters: 0, pending: 0, nextTryAt: undefined });
  await waitFor('the recovery line', () => linesOf(log(), 'later', 30).length > 0);
  t.match(linesOf(log(), 'later', 30), [/^route later delivers again \(after \d+ failed tries\)$/]);
});
