import t, { type Test } from 'tap';
import { createServiceLocator } from '../../src/arcgis/service-locator.js';
import { buildEvent, type AcceptedEvent } from '../../src/events/build-event.js';
import { activityOf, parseActivityField } from '../../src/events/service-activity.js';
import { readServiceReports, serviceReportRow } from '../../src/queue/service-report.js';
import { activityKey, upstreamFailuresKey, upstreamKey, watermarksKey } from '../../src/redis/keys.js';
import { accepted, envelopeOf } from '../helpers/envelope.js';
import { startEventQueue } from '../helpers/event-queue.js';
import { startRedis } from '../helpers/redis.js';

const redis = await startRedis(t);
const PARCELS = 'Hosted/Parcels.FeatureServer';
const HOUR_MS = 3_600_000;

/** Trusts the server of {@link parcelsDelivery}. */
const serviceLocator = createServiceLocator({ trusted: ['https://gis.example.com'] });

/** An event queue where the server of {@link parcelsDelivery} is at generation 1000. */
async function parcelsQueue(t: Test) {
  const started = await startEventQueue(t, redis);
  const serviceUrl = 'https://gis.example.com/server/rest/services/Hosted/Parcels/FeatureServer';
  await started.eventQueue.confirm('default', [{ scope: `default ${PARCELS}`, from: 1000, to: 1000, serviceUrl }]);
  return started;
}

/** A signed ArcGIS Enterprise delivery of Parcels' edits in server generations `(from, to]`. */
function parcelsDelivery(from: number, to: number): AcceptedEvent {
  const payload = {
    serviceType: 'FeatureServer',
    changesUrl: `https://gis.example.com/server/rest/services/Hosted/Parcels/FeatureServer/extractChanges?serverGens=[${from},${to}]`,
    folderName: 'Hosted',
    serviceName: 'Parcels',
    events: [{ eventType: 'FeaturesCreated', when: 1 }],
  };
  const raw = Buffer.from(JSON.stringify(payload));
  return buildEvent({ raw, hook: 'default', contentType: 'application/json', verified: true, classified: payload }, serviceLocator);
}

t.test('activityOf names the service of a signed delivery, a backfill or a poll, and nothing for an unsigned one', async (t) => {
  const gp = { ...envelopeOf('gp'), service: { folderName: 'Tools', serviceName: 'Buffer', serviceType: 'GPServer' } };
  t.same(activityOf(gp), { kind: 'delivery', service: 'Tools/Buffer.GPServer' });
  const online = { ...envelopeOf('feature'), service: { serviceName: 'Parcels' }, source: 'backfill' as const };
  t.same(activityOf(online), { kind: 'backfill', service: 'Parcels.FeatureServer' }, 'ArcGIS Online names no type: its family says');
  t.equal(activityOf({ ...gp, verified: false }), undefined, 'unsigned: not recorded');
  t.equal(activityOf(envelopeOf('unknown')), undefined, 'no service named');
  t.same(parseActivityField('poll\tA/B.FeatureServer'), { kind: 'poll', service: 'A/B.FeatureServer' });
  t.equal(parseActivityField('other\tA/B.FeatureServer'), undefined);
});

t.test('the report of each service: webhook state, last delivery, failures of the last day, watermark, backfill and poll', async (t) => {
  const { eventQueue, connection, prefix } = await parcelsQueue(t);
  const now = Date.now();
  await eventQueue.enqueue(parcelsDelivery(100, 110));
  await eventQueue.enqueue(parcelsDelivery(100, 110)); // a repeat is a delivery all the same
  await eventQueue.enqueue(
    accepted({ ...envelopeOf('gp'), service: { folderName: 'Tools', serviceName: 'Buffer', serviceType: 'GPServer' } }),
  );
  await eventQueue.enqueue(
    accepted({ ...envelopeOf('gp'), service: { serviceName: 'Unsigned', serviceType: 'GPServer' }, verified: false }),
  );
  await eventQueue.enqueue(
    accepted({ ...envelopeOf('feature'), service: { folderName: 'Hosted', serviceName: 'Parcels' }, source: 'backfill' }),
  );
  await eventQueue.reserve('default', [], { kind: 'poll', service: 'Hosted/Roads.FeatureServer' });
  const state = { webhookId: 'w1', active: true, deactivations: 2, checkedAt: now, deactivatedAt: now - HOUR_MS, recoveredAt: now };
  await connection.hset(upstreamKey(prefix), PARCELS, JSON.stringify(state));
  await connection.zadd(
    upstreamFailuresKey(prefix, PARCELS),
    now - 30 * HOUR_MS,
    String(now - 30 * HOUR_MS),
    now - HOUR_MS,
    String(now - HOUR_MS),
  );

  const reports = await readServiceReports(connection, prefix, now);
  t.same(
    reports.map((report) => report.service),
    ['Hosted/Parcels.FeatureServer', 'Hosted/Roads.FeatureServer', 'Tools/Buffer.GPServer'],
    'sorted; the unsigned delivery left no trace',
  );
  const [parcels, roads, buffer] = reports;
  t.match(parcels, {
    mode: 'webhook',
    webhook: { id: 'w1', active: true, deactivations: 2, checkedAt: new Date(now).toISOString(), recoveredAt: new Date(now).toISOString() },
    lastDeliveryAt: String,
    recentFailures: 1,
    lastFailureAt: new Date(now - HOUR_MS).toISOString(),
    watermark: 110,
    lastBackfillAt: String,
  });
  t.notOk('lastPollAt' in parcels!, 'never polled');
  t.same(roads, { service: 'Hosted/Roads.FeatureServer', mode: 'poll', recentFailures: 0, lastPollAt: roads!.lastPollAt });
  t.match(buffer, { mode: 'webhook', lastDeliveryAt: String, recentFailures: 0 });
  t.notOk('webhook' in buffer!, 'not registered by geohook');
  const times = Object.values(await connection.hgetall(activityKey(prefix))).map(Number);
  t.ok(
    times.every((at) => at >= now - 60_000 && at <= Date.now()),
    'activities are stamped with the time of the write',
  );

  t.same(serviceReportRow(parcels!), {
    service: PARCELS,
    mode: 'webhook',
    webhook: 'active, deactivated 2×',
    lastDelivery: parcels!.lastDeliveryAt,
    failures24h: '1',
    lastFailure: parcels!.lastFailureAt,
    watermark: '110',
    lastBackfill: parcels!.lastBackfillAt,
    lastPoll: '',
  });
  t.equal(serviceReportRow(buffer!).failures24h, '', 'no webhook: no failure count');
});

t.test('a service both delivered and polled is in both modes', async (t) => {
  const { eventQueue, connection, prefix } = await parcelsQueue(t);
  await eventQueue.enqueue(parcelsDelivery(5, 6));
  await eventQueue.reserve('default', [], { kind: 'poll', service: PARCELS });
  const [report] = await readServiceReports(connection, prefix);
  t.match(report, { service: PARCELS, mode: 'webhook+poll', lastDeliveryAt: String, lastPollAt: String, watermark: 6 });
});

t.test('an ArcGIS Online service shows the watermark of each layer, the highest over its hooks', async (t) => {
  const { connection, prefix } = await startEventQueue(t, redis);
  await connection.hset(watermarksKey(prefix), {
    'default Parcels.FeatureServer#0': '12',
    'default Parcels.FeatureServer#10': '3',
    'default Parcels.FeatureServer#2': '40',
    'other Parcels.FeatureServer#0': '15',
    [`default ${PARCELS}`]: '7',
  });
  const [enterprise, online] = await readServiceReports(connection, prefix);
  t.match(enterprise, { service: PARCELS, watermark: 7 });
  t.notOk('layerWatermarks' in enterprise!, 'one watermark for the whole service');
  t.match(online, { service: 'Parcels.FeatureServer', watermark: 40, layerWatermarks: { 0: 15, 2: 40, 10: 3 } });
  t.equal(serviceReportRow(online!).watermark, '0: 15, 2: 40, 10: 3', 'in layer order');
  t.equal(serviceReportRow(enterprise!).watermark, '7');
});
