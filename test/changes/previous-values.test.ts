import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { PreviousValuesStore, type PreviousValuesWrite } from '../../src/changes/previous-values.js';
import { uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';

const redis = await startRedis(t);

const GLOBAL_ID = '{6E5F1C2A-0B7D-4F6A-9C3E-2D1B0A9F8E7D}';

/** A store on a fresh key, with a raw client to read the hash it writes. */
function storeOf(t: Test): { store: PreviousValuesStore; raw: Redis; key: string } {
  const raw = new Redis(redis.url);
  t.teardown(() => raw.disconnect());
  return { store: new PreviousValuesStore(raw), raw, key: `${uniquePrefix()}:previous` };
}

const write = (serverGen: number, status: string): PreviousValuesWrite => ({
  objectId: 7,
  serverGen,
  globalId: GLOBAL_ID,
  attributes: { status },
});
const deleted = (serverGen: number): PreviousValuesWrite => ({ objectId: 7, serverGen, globalId: GLOBAL_ID, deleted: true });

t.test('the writes of one call are taken in order, as if written one by one', async (t) => {
  const { store, raw, key } = storeOf(t);
  await store.write(key, [write(5, 'first'), write(6, 'second')]);
  t.same((await store.read(key, [7])).get(7)?.attributes, { status: 'second' }, 'a later write of the same feature wins');
  t.equal(await raw.hget(key, `g:${GLOBAL_ID}`), '7', 'its GlobalID is indexed');

  await store.write(key, [write(9, 'newest'), write(8, 'older')]);
  t.same(
    (await store.read(key, [7])).get(7)?.attributes,
    { status: 'newest' },
    'an older generation after a newer one in the same call is not written',
  );

  await store.write(key, [write(10, 'last'), deleted(10)]);
  t.same(await raw.hgetall(key), {}, 'a delete after a write in the same call removes the feature and its GlobalID');

  await store.write(key, [deleted(11), write(11, 'again')]);
  t.same(
    (await store.read(key, [GLOBAL_ID])).get(GLOBAL_ID)?.attributes,
    { status: 'again' },
    'a write after a delete in the same call keeps it',
  );
});

t.test('a newer version kept is not overwritten by an older range', async (t) => {
  const { store, key } = storeOf(t);
  await store.write(key, [write(20, 'kept')]);
  await store.write(key, [write(19, 'late'), deleted(18)]);
  const kept = (await store.read(key, [7])).get(7);
  t.equal(kept?.serverGen, 20);
  t.same(kept?.attributes, { status: 'kept' });
});
