import t from 'tap';
import { InvalidWhereError } from '../../src/arcgis/where/where-error.js';
import { compileTransitionWhere, compileWhere } from '../../src/arcgis/where/where.js';
import type { ChangeEvent } from '../../src/changes/change-event.js';
import type { RouteFilterConfig } from '../../src/config/route-filter.js';
import { routeMatcher, type RelayLayer } from '../../src/fanout/route-match.js';
import { changeUpdated } from '../helpers/relay-events.js';

const PARCELS: RelayLayer = {
  id: 0,
  fields: [
    { name: 'objectid', type: 'esriFieldTypeOID' },
    { name: 'status', type: 'esriFieldTypeString' },
    { name: 'owner', type: 'esriFieldTypeString' },
    { name: 'area_sqm', type: 'esriFieldTypeDouble' },
  ],
};

/** A change of parcel 55: `op`, its tracked `before` (undefined: unknown) and its `after`. */
function change(
  op: 'c' | 'u' | 'd' | 'r',
  before: Record<string, unknown> | null | undefined,
  after: Record<string, unknown> | null,
): ChangeEvent {
  const type = ({ c: 'change.created', u: 'change.updated', d: 'change.deleted', r: 'change.read' } as const)[op];
  const event = changeUpdated({ type, op, after: after === null ? null : { attributes: { objectid: 55, ...after } } });
  delete event.before;
  delete event.changedFields;
  if (before !== undefined) event.before = before === null ? null : { attributes: before };
  if (op === 'u' && before !== undefined && before !== null && after !== null)
    event.changedFields = Object.keys(before).filter((name) => before[name] !== after[name]);
  return event;
}

const match = (filter: Omit<RouteFilterConfig, 'types'> & { types?: string[] }, event: ChangeEvent) =>
  routeMatcher({ types: ['change.*'], ...filter })(event, [PARCELS]);

t.test('a bare name reads after, or before for a delete; before. and after. read either row', async (t) => {
  const update = change('u', { status: 'Open', owner: 'A' }, { status: 'Closed', owner: 'A' });
  t.equal(match({ where: "status = 'Closed'" }, update), true);
  t.equal(match({ where: "status = 'Open'" }, update), false);
  t.equal(match({ where: "before.status = 'Open' AND after.status = 'Closed'" }, update), true);
  t.equal(match({ where: "BEFORE.\"Status\" = 'Open' AND After.STATUS <> 'Open'" }, update), true, 'qualifiers and names in any case');
  t.equal(match({ where: "before.status = 'Closed'" }, update), false);
  const deleted = change('d', { status: 'Open', owner: 'A' }, null);
  t.equal(match({ where: "status = 'Open'" }, deleted), true);
  t.equal(match({ where: 'after.status IS NULL' }, deleted), true, 'a delete has no after: nulls');
  const created = change('c', null, { status: 'Open', owner: 'A' });
  t.equal(match({ where: 'before.status IS NULL' }, created), true, 'a create has no before: nulls');
});

t.test('a clause that reads a previous value geohook does not have takes no event', async (t) => {
  const unknown = change('u', undefined, { status: 'Closed', owner: 'A' });
  t.equal(match({ where: 'before.status IS NULL' }, unknown), false, 'previous row unknown');
  t.equal(match({ where: "status = 'Closed'" }, unknown), true, 'a bare name needs no previous row');
  const untracked = change('u', { owner: 'A' }, { status: 'Closed', owner: 'B' });
  t.equal(match({ where: 'before.status IS NULL' }, untracked), false, 'status not tracked');
  t.equal(match({ where: "before.owner = 'A'" }, untracked), true);
  t.equal(match({ where: 'status IS NULL' }, change('d', { owner: 'A' }, null)), false, 'a delete whose field is not tracked');
});

t.test('when: an update whose field changed, from and to', async (t) => {
  const update = change('u', { status: 'Open', owner: 'A' }, { status: 'Closed', owner: 'A' });
  t.equal(match({ when: { field: 'status', from: 'Open', to: 'Closed' } }, update), true);
  t.equal(match({ when: { field: 'STATUS', to: 'Closed' } }, update), true, 'the field in any case');
  t.equal(match({ when: { field: 'status', from: 'Pending' } }, update), false);
  t.equal(match({ when: { field: 'status' } }, update), true);
  t.equal(match({ when: { field: 'owner' } }, update), false, 'owner did not change');
  t.equal(match({ when: { field: 'status', to: 'Closed' } }, change('c', null, { status: 'Closed' })), false, 'not a create');
  t.equal(match({ when: { field: 'status', to: 'Closed' } }, change('u', undefined, { status: 'Closed' })), false, 'nor an unknown before');
  t.equal(match({ changed: ['Status'] }, update), true, 'changed names in any case');
});

t.test('emit: crossings of the where are change.entered and change.left, each once', async (t) => {
  const where = "status = 'Open'";
  const cases: [string, ChangeEvent, unknown][] = [
    ['a create into it', change('c', null, { status: 'Open' }), 'change.entered'],
    ['a create outside it', change('c', null, { status: 'Closed' }), false],
    ['an update into it', change('u', { status: 'Closed' }, { status: 'Open' }), 'change.entered'],
    ['an update out of it', change('u', { status: 'Open' }, { status: 'Closed' }), 'change.left'],
    ['an update staying in it', change('u', { status: 'Open', owner: 'A' }, { status: 'Open', owner: 'B' }), false],
    ['an update staying out', change('u', { status: 'Closed' }, { status: 'Pending' }), false],
    ['a delete of a feature in it', change('d', { status: 'Open' }, null), 'change.left'],
    ['a delete of a feature out of it', change('d', { status: 'Closed' }, null), false],
    ['an update whose previous row is unknown', change('u', undefined, { status: 'Open' }), false],
    ['an update whose field is not tracked', change('u', { owner: 'A' }, { status: 'Open', owner: 'B' }), false],
    ['a delete whose previous row is unknown', change('d', undefined, null), false],
    ['a snapshot read', change('r', null, { status: 'Open' }), false],
  ];
  for (const [name, event, expected] of cases)
    t.equal(match({ types: ['change.entered', 'change.left'], where, emit: 'both' }, event), expected, name);
  const only = (emit: 'entered' | 'left', event: ChangeEvent) => match({ where, emit }, event);
  t.equal(only('entered', cases[3]![1]), false, 'emit entered: an update out of it is an update outside the filter');
  t.equal(only('entered', cases[6]![1]), true, 'emit entered: a delete of a feature in it is the delete');
  t.equal(only('left', cases[0]![1]), true, 'emit left: a create into it is the create');
  t.equal(match({ where, emit: 'both' }, cases[4]![1]), true, 'with change.*: an update staying in it is the update');
  t.equal(match({ types: ['change.left'], where, emit: 'left' }, cases[2]![1]), false, 'types apply to the type taken');
});

t.test('before. and after. are read by change-event filters only', async (t) => {
  t.throws(() => compileWhere("before.status = 'Open'", PARCELS.fields), InvalidWhereError);
  t.throws(() => compileTransitionWhere("old.status = 'Open'", PARCELS.fields), /qualified by before\. or after\. only/);
  t.throws(() => compileTransitionWhere("before.= 'Open'", PARCELS.fields), /a field name after 'before\.'/);
  t.same(compileTransitionWhere("before.Status = 'Open' AND owner = after.owner", PARCELS.fields).reads, {
    row: ['owner'],
    before: ['status'],
    after: ['owner'],
  });
});
