import t from 'tap';
import type { LayerInfo } from '../../src/arcgis-request/layer-info.js';
import { deleteEvent, rowEvent, schemaEvent, type BuiltChange, type RangeContext } from '../../src/changes/build-change-events.js';
import type { ChangeEvent } from '../../src/changes/change-event.js';
import { parseChangeHead, parseLogHeads } from '../../src/fanout/event-log.js';
import { routeMatcher } from '../../src/fanout/route-match.js';
import type { RoutedEvent } from '../../src/fanout/routed-event.js';
import { createRelayRoute } from '../../src/relay/relay-route.js';
import { changeUpdated, parcelSubmission, storedFeatureEvent, storedGpEvent } from '../helpers/relay-events.js';

// A reader that reads no rows (a route or subscription without row filters, a stream lane without a transform)
// parses change events up to their rows: what it reads of the head must be what the whole event says.

/** Names and text a naive cut would stop in: `,"after":` inside strings. */
const TRICKY = 'Parcels ,"after": {"x":1}';
const context: RangeContext = {
  hook: 'default',
  serviceName: 'Hosted/Parcels.FeatureServer',
  service: { folderName: 'Hosted', serviceName: TRICKY, serviceType: 'FeatureServer', url: `https://gis.example.com/x?q=,"after":` },
  serverGens: [10, 20],
  track: '*',
  now: new Date('2026-11-29T10:00:00Z'),
};
const layer: LayerInfo = {
  id: 3,
  name: TRICKY,
  objectIdField: 'objectid',
  globalIdField: 'globalid',
  fields: [
    { name: 'objectid', type: 'esriFieldTypeOID' },
    { name: 'globalid', type: 'esriFieldTypeGlobalID' },
    { name: 'status', type: 'esriFieldTypeString' },
    { name: 'edited', type: 'esriFieldTypeDate' },
  ],
  editFieldsInfo: { editDateField: 'edited' },
  relatedTableIds: [],
  isChild: false,
  relationships: [],
  maxRecordCount: 1000,
  geometryType: 'esriGeometryPoint',
  wkid: 4326,
};
/** The layer without GlobalIDs: events keyed by object id. */
const { globalIdField: _globalIdField, ...withoutGlobalId } = layer;
const feature = {
  attributes: { objectid: 7, globalid: '{7A7A7A7A-0000-4000-8000-000000000007}', status: 'a ,"after": b', edited: 1795000000000 },
  geometry: { x: 1, y: 2 },
};
const previous = { serverGen: 5, objectId: 7, attributes: { status: 'Open' }, geometryHash: '0' };

/** An event as the change writer stores it: built, then its place in the transaction added. */
const stored = ({ event }: BuiltChange): ChangeEvent => ({
  ...event,
  source: { origin: 'webhook', serverGens: [10, 20], transaction: { id: 't', index: 0, total: 1 } },
});

const headOf = ({ id, type, op, hook, service, layer, key }: ChangeEvent) => ({
  id,
  type,
  ...(op === undefined ? {} : { op }),
  hook,
  service,
  layer,
  key,
});

t.test("the change writer's events are read up to their rows, and each head is the whole event's", async (t) => {
  const events = [
    stored(rowEvent(context, layer, 'c', feature, undefined)),
    stored(rowEvent(context, layer, 'u', feature, previous)),
    stored(rowEvent(context, layer, 'u', feature, undefined)),
    stored(deleteEvent(context, layer, 7, previous)),
    stored(deleteEvent(context, layer, '{7A7A7A7A-0000-4000-8000-000000000007}', undefined)),
    stored(schemaEvent(context, layer, { added: ['status'], removed: [] })),
    stored(rowEvent({ ...context, asOf: 'current' }, withoutGlobalId, 'u', feature, previous)),
  ];
  for (const event of events) {
    const data = JSON.stringify(event);
    t.ok(data.includes(',\\"after\\":'), `${event.type}: its strings hold ,"after": (escaped in its JSON)`);
    t.strictSame(parseChangeHead(data), headOf(event), `${event.type} ${JSON.stringify(event.key)}: the head is the event's`);
  }
});

t.test('anything but a change event as the writer writes it is parsed whole', async (t) => {
  const { after, ...rest } = changeUpdated();
  const others: [string, unknown][] = [
    ['a submission (its parent has the rows)', parcelSubmission()],
    ['a stored feature event', storedFeatureEvent()],
    ['a stored GP event', storedGpEvent()],
    ['a change event written in another order', { after, ...rest }],
    ['an after in a nested object of the head', { ...changeUpdated(), key: { objectId: 1, x: { y: 2, after: 3 } } }],
    ['a crossing (never stored: a destination takes it)', changeUpdated({ type: 'change.entered' })],
    ['a head without its op', (({ op: _op, ...event }) => event)(changeUpdated())],
  ];
  for (const [what, event] of others) t.equal(parseChangeHead(JSON.stringify(event)), undefined, what);
  const entries = parseLogHeads(
    others.map(([, event], index) => [`1-${index}`, ['j', `j${index}`, 'd', JSON.stringify(event)]]),
    () => t.fail('every entry is an event'),
  );
  t.strictSame(
    entries.map(({ event }) => event),
    others.map(([, event]) => event),
    'the log reader parses them whole',
  );
});

t.test('a route without row filters takes by the head what it takes by the whole event; one with row filters reads rows', async (t) => {
  const whole: RoutedEvent[] = [
    changeUpdated(),
    changeUpdated({ type: 'change.created', op: 'c', layer: { id: 1, name: 'Inspections' } }),
    changeUpdated({ type: 'change.deleted', op: 'd', after: null, service: { ...changeUpdated().service, folderName: 'Other' } }),
    { ...storedFeatureEvent(), verified: false },
    storedFeatureEvent(),
    storedGpEvent(),
  ];
  const routes = [
    { types: ['change.*'] },
    { types: ['change.updated', 'feature.*'] },
    { types: ['*'], services: ['Hosted/Parcels.FeatureServer'] },
    { types: ['change.*', 'gp.*'], layers: [0] },
    { types: ['*'], services: ['Tools/Buffer.GPServer', 'Other/Parcels.FeatureServer'] },
  ];
  let taken = 0;
  for (const filter of routes) {
    for (const matcher of [
      routeMatcher(filter),
      createRelayRoute({ ...filter, name: 'r', url: 'https://example.com/h', format: 'standard' }).matches,
    ]) {
      for (const event of whole) {
        const head = 'family' in event ? event : parseChangeHead(JSON.stringify(event))!;
        const verdict = matcher(event);
        t.equal(matcher.head!(head), verdict === true, `${JSON.stringify(filter)}: ${event.type}`);
        if (verdict === true) taken += 1;
      }
    }
  }
  t.ok(taken > 10 && taken < routes.length * 2 * whole.length, `the routes take some events and pass others over (${taken})`);
  for (const filter of [{ where: "status = 'Open'" }, { changed: ['status'] }, { when: { field: 'status' } }])
    t.equal(routeMatcher({ types: ['change.*'], ...filter } as never).head, undefined, `${Object.keys(filter)[0]}: no head`);
});
