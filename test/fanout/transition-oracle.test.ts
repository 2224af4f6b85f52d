/**
 * The oracle of transition filters (issue 54): random edits of Parcels in the emulator (creates, updates of one or
 * several fields, geometry moves, deletes) with CHANGES_TRACK=*, 20 generated filters as subscriptions, and what each
 * subscription's queue holds compared with what an oracle computes from the rows the test itself wrote: no event too
 * many, none missing, each crossing one `change.entered` or `change.left`. ORACLE_EDITS sets the number of edits
 * (800 here; `ORACLE_EDITS=10000` for the full run), ORACLE_SEED the seed.
 */
import { applyEdits } from '@esri/arcgis-rest-feature-service';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import t from 'tap';
import type { ChangeEvent } from '../../src/changes/change-event.js';
import type { SubscriptionConfig } from '../../src/config/subscription-schema.js';
import { subscriptionQueueName } from '../../src/queue/names.js';
import { eventLogKey, fanoutKey } from '../../src/redis/keys.js';
import { setUpParcelsChanges } from '../helpers/parcels-changes.js';
import { configFile } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { square } from '../helpers/square.js';
import { waitFor } from '../helpers/wait.js';

const EDITS = Number(process.env.ORACLE_EDITS ?? 800);
const SEED = Number(process.env.ORACLE_SEED ?? 54);
/** Edits per applyEdits call: each feature at most once, so that every edit is a change event of its own. */
const ROUND = 150;

const redis = await startRedis(t);

/** mulberry32: a small seeded generator, so that a failure can be run again. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = Math.imul(state ^ (state >>> 15), 1 | state);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = random(SEED);
const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;

/** The attributes the test writes and the filters read. */
interface Parcel {
  status: string;
  owner: string;
  area_sqm: number;
}
type Row = Parcel | undefined;
const STATUSES = ['Open', 'Pending', 'Closed'];
const OWNERS = ['Alice', 'Bob', 'Beth', 'Carol', 'Dan'];
const freshParcel = (): Parcel => ({ status: pick(STATUSES), owner: pick(OWNERS), area_sqm: Math.round(rand() * 1000) });

/** A clause and the same test written in JavaScript: the oracle's own reading of it. */
interface Atom {
  sql: string;
  test: (row: Parcel) => boolean;
}
function atom(): Atom {
  const status = pick(STATUSES);
  const other = pick(STATUSES.filter((value) => value !== status));
  const area = Math.round(rand() * 1000);
  const letter = pick(['A', 'B', 'C', 'D']);
  return pick<() => Atom>([
    () => ({ sql: `status = '${status}'`, test: (row) => row.status === status }),
    () => ({ sql: `status <> '${status}'`, test: (row) => row.status !== status }),
    () => ({ sql: `status IN ('${status}', '${other}')`, test: (row) => row.status === status || row.status === other }),
    () => ({ sql: `area_sqm > ${area}`, test: (row) => row.area_sqm > area }),
    () => ({ sql: `area_sqm BETWEEN ${area / 2} AND ${area}`, test: (row) => row.area_sqm >= area / 2 && row.area_sqm <= area }),
    () => ({ sql: `owner LIKE '${letter}%'`, test: (row) => row.owner.startsWith(letter) }),
    () => ({ sql: `NOT owner LIKE '${letter}%'`, test: (row) => !row.owner.startsWith(letter) }),
  ])();
}
function clause(): Atom {
  const [a, b] = [atom(), atom()];
  return pick<() => Atom>([
    () => a,
    () => ({ sql: `${a.sql} AND ${b.sql}`, test: (row) => a.test(row) && b.test(row) }),
    () => ({ sql: `(${a.sql}) OR (${b.sql})`, test: (row) => a.test(row) || b.test(row) }),
  ])();
}

type Op = 'c' | 'u' | 'd';
/** A filter under test: its subscription, and the type the oracle expects it to take an edit as (undefined: none). */
interface Spec {
  subscription: SubscriptionConfig;
  expect: (op: Op, before: Row, after: Row) => string | undefined;
}
const ordinary = (op: Op): string => ({ c: 'change.created', u: 'change.updated', d: 'change.deleted' })[op];
const changedOf = (before: Row, after: Row): string[] =>
  before === undefined || after === undefined
    ? []
    : (['status', 'owner', 'area_sqm'] as const).filter((name) => before[name] !== after[name]);

function spec(index: number): Spec {
  const name = `oracle-${index}`;
  const where = clause();
  const rowOf = (op: Op, before: Row, after: Row): Parcel => (op === 'd' ? before : after)!;
  const kind = index % 7;
  if (kind === 0 || kind === 1 || kind === 2) {
    const emit = (['both', 'entered', 'left'] as const)[kind];
    const types = kind === 0 ? ['change.entered', 'change.left'] : ['change.*'];
    return {
      subscription: { name, types, where: where.sql, emit },
      expect: (op, before, after) => {
        const wasIn = before !== undefined && where.test(before);
        const isIn = after !== undefined && where.test(after);
        const crossing = wasIn === isIn ? undefined : isIn ? 'entered' : 'left';
        if (crossing !== undefined && (emit === 'both' || emit === crossing)) return `change.${crossing}`;
        return types.includes('change.*') && where.test(rowOf(op, before, after)) ? ordinary(op) : undefined;
      },
    };
  }
  if (kind === 3) {
    const [from, to] = [pick(STATUSES), pick(STATUSES)];
    const area = Math.round(rand() * 1000);
    return pick<() => Spec>([
      () => ({
        subscription: { name, types: ['change.*'], where: `before.status = '${from}' AND after.status = '${to}'` },
        expect: (op, before, after) => (op === 'u' && before!.status === from && after!.status === to ? ordinary(op) : undefined),
      }),
      () => ({
        subscription: {
          name,
          types: ['change.updated', 'change.deleted'],
          where: `before.area_sqm < ${area} AND NOT after.area_sqm < ${area}`,
        },
        // A delete's after is null: NOT null is unknown, and an unknown clause takes nothing.
        expect: (op, before, after) => (op === 'u' && before!.area_sqm < area && !(after!.area_sqm < area) ? ordinary(op) : undefined),
      }),
    ])();
  }
  if (kind === 4) {
    const field = pick(['status', 'owner'] as const);
    const [from, to] = [
      rand() < 0.5 ? pick(field === 'status' ? STATUSES : OWNERS) : undefined,
      pick(field === 'status' ? STATUSES : OWNERS),
    ];
    return {
      subscription: { name, types: ['change.updated'], when: { field, to, ...(from === undefined ? {} : { from }) } },
      expect: (op, before, after) =>
        op === 'u' && before![field] !== after![field] && (from === undefined || before![field] === from) && after![field] === to
          ? ordinary(op)
          : undefined,
    };
  }
  if (kind === 5)
    return {
      subscription: { name, types: ['change.updated'], where: where.sql, changed: ['Owner'] },
      expect: (op, before, after) =>
        op === 'u' && changedOf(before, after).includes('owner') && where.test(after!) ? ordinary(op) : undefined,
    };
  return {
    subscription: { name, types: ['change.*'], where: where.sql },
    expect: (op, before, after) => (where.test(rowOf(op, before, after)) ? ordinary(op) : undefined),
  };
}

t.test(`transition filters: ${EDITS} random edits, 20 filters, what each takes is what the oracle computes`, async (t) => {
  const specs = Array.from({ length: 20 }, (_, index) => spec(index));
  const { events, url, authentication, prefix } = await setUpParcelsChanges(t, redis, {
    CHANGES_TRACK: '*',
    GEOHOOK_CONFIG: configFile(t, { subscriptions: specs.map(({ subscription }) => subscription) }),
  });

  // The edits, each with the rows before and after as the test wrote them.
  const parcels = new Map<number, Parcel>();
  const edits: { objectId: number; op: Op; before: Row; after: Row }[] = [];
  const startedMs = Date.now();
  while (edits.length < EDITS) {
    const size = Math.min(ROUND, EDITS - edits.length);
    const existing = [...parcels.keys()].sort(() => rand() - 0.5);
    const adds: Parcel[] = [];
    const updates: { objectid: number; attributes: Partial<Parcel>; move: boolean }[] = [];
    const deletes: number[] = [];
    for (let i = 0; i < size; i++) {
      const roll = rand();
      const id = existing.pop();
      if (id === undefined || roll < 0.3 || parcels.size < 20) adds.push(freshParcel());
      else if (roll < 0.4) deletes.push(id);
      else {
        const fresh = freshParcel();
        const names = (['status', 'owner', 'area_sqm'] as const).filter(() => rand() < 0.4);
        const attributes = Object.fromEntries(names.map((name) => [name, fresh[name]])) as Partial<Parcel>;
        updates.push({ objectid: id, attributes, move: names.length === 0 || rand() < 0.2 });
      }
    }
    const answer = await applyEdits({
      url: `${url}/0`,
      authentication,
      adds: adds.map((row, i) => ({ attributes: { ...row, parcel_id: `p${edits.length + i}` }, geometry: square(i * 60) as never })),
      updates: updates.map(({ objectid, attributes, move }) => ({
        attributes: { objectid, ...attributes },
        ...(move ? { geometry: square(Math.round(rand() * 5000), 100) as never } : {}),
      })),
      deletes,
    });
    answer.addResults.forEach(({ objectId }, i) => {
      parcels.set(objectId, adds[i]!);
      edits.push({ objectId, op: 'c', before: undefined, after: adds[i] });
    });
    for (const { objectid, attributes } of updates) {
      const before = parcels.get(objectid)!;
      const after = { ...before, ...attributes };
      parcels.set(objectid, after);
      edits.push({ objectId: objectid, op: 'u', before, after });
    }
    for (const id of deletes) {
      edits.push({ objectId: id, op: 'd', before: parcels.get(id), after: undefined });
      parcels.delete(id);
    }
    // The next round waits for this one's change events: no range holds two edits of one feature.
    await waitFor(`${edits.length} change events`, () => events.length >= edits.length, { timeoutMs: 60_000 });
  }
  const raw = new Redis(redis.url);
  t.teardown(() => raw.disconnect());
  const [[lastId]] = (await raw.xrevrange(eventLogKey(prefix), '+', '-', 'COUNT', 1)) as [[string, string[]]];
  await waitFor('the fan-out past the last event', async () => (await raw.hget(fanoutKey(prefix), 'cursor')) === lastId, {
    timeoutMs: 60_000,
  });
  const elapsedMs = Date.now() - startedMs;

  // Each change event named by its feature and its place among that feature's edits: what the oracle numbers too.
  t.equal(events.length, edits.length, 'one change event per edit');
  const order = (event: ChangeEvent): number => event.source.serverGens[1] * 1e4 + event.source.transaction.index;
  const place = new Map<string, string>();
  const seen = new Map<number, number>();
  for (const event of [...events].sort((a, b) => order(a) - order(b))) {
    const objectId = Number(event.key.objectId);
    const k = seen.get(objectId) ?? 0;
    seen.set(objectId, k + 1);
    place.set(event.id, `${objectId}#${k}:${event.op}`);
  }
  const editPlace = new Map<number, number>();
  const expectedPlaces = edits.map(({ objectId, op }) => {
    const k = editPlace.get(objectId) ?? 0;
    editPlace.set(objectId, k + 1);
    return `${objectId}#${k}:${op}`;
  });
  t.same(new Set(place.values()), new Set(expectedPlaces), 'the change events are the edits, in order per feature');

  let crossings = 0;
  let delivered = 0;
  for (const { subscription, expect } of specs) {
    const expected = new Set(
      edits.flatMap(({ op, before, after }, index) => {
        const type = expect(op, before, after);
        if (type === 'change.entered' || type === 'change.left') crossings++;
        return type === undefined ? [] : [`${expectedPlaces[index]} ${type}`];
      }),
    );
    const queue = new Queue(subscriptionQueueName(subscription.name), { connection: raw, prefix });
    const jobs = await queue.getWaiting(0, -1);
    await queue.close();
    const got = jobs.map((job) => `${place.get((job.data as ChangeEvent).id) ?? job.id} ${job.name}`);
    delivered += got.length;
    const falsePositives = got.filter((entry) => !expected.has(entry));
    const falseNegatives = [...expected].filter((entry) => !got.includes(entry));
    t.same(
      {
        falsePositives: falsePositives.slice(0, 5),
        falseNegatives: falseNegatives.slice(0, 5),
        duplicates: got.length - new Set(got).size,
      },
      { falsePositives: [], falseNegatives: [], duplicates: 0 },
      `${subscription.name} ${JSON.stringify({ where: subscription.where, when: subscription.when, emit: subscription.emit, changed: subscription.changed })}: ${expected.size} events`,
    );
  }
  t.ok(crossings > 0, `${crossings} crossings among the expected events`);
  t.comment(
    `${EDITS} edits, 20 filters, ${delivered} events taken, ${crossings} crossings: ${elapsedMs} ms from the first edit to the last hand-over`,
  );
});
