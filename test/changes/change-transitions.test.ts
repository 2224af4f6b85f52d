import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import t from 'tap';
import { monitorRedis } from '../../harness/redis-monitor.js';
import type { ChangeEvent } from '../../src/changes/change-event.js';
import { loadConfig } from '../../src/config/load-config.js';
import { PARCELS } from '../helpers/edits.js';
import { countChanges, setUpParcelsChanges } from '../helpers/parcels-changes.js';
import { configFile } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

// geohook and the emulator, and their change events: past tap's 60 s beside the other test files.
t.setTimeout(180_000);

const redis = await startRedis(t);

/** What a change event says in brief: its type and parcel. */
const brief = (event: ChangeEvent): string =>
  `${event.type} ${String(event.after?.attributes.parcel_id ?? event.before?.attributes.parcel_id ?? event.key.objectId)}`;

t.test(
  "issue 54: a changes service's where with emit hands on crossings as change.entered and change.left, and drops the rest",
  async (t) => {
    const changes = { [PARCELS]: { track: ['parcel_id', 'status'], layers: [0], where: "status = 'Open'", emit: 'both' } };
    const { emulator, events } = await setUpParcelsChanges(t, redis, { GEOHOOK_CONFIG: configFile(t, { changes }) });
    const edit = async (edits: unknown): Promise<number[]> => {
      const { body } = await emulator.control(`services/${PARCELS}/applyEdits`, { edits: [{ id: 0, ...(edits as object) }] });
      const results = (body as { results: { addResults?: { objectId: number }[] }[] }).results[0]?.addResults ?? [];
      return results.map((result) => result.objectId);
    };
    const upTo = (n: number) => waitFor(`${n} change events`, () => events.length >= n && events.map(brief));

    const [open, closed] = await edit({
      adds: [{ attributes: { parcel_id: 'P-1', status: 'Open' } }, { attributes: { parcel_id: 'P-2', status: 'Closed' } }],
    });
    t.same(await upTo(1), ['change.entered P-1'], 'a create into the filter enters it; one outside it is not handed on');
    await edit({ updates: [{ attributes: { objectid: open, owner: 'Ada' } }] });
    t.same((await upTo(2)).at(-1), 'change.updated P-1', 'an update within the filter is itself');
    await edit({ updates: [{ attributes: { objectid: open, status: 'Closed' } }] });
    t.same((await upTo(3)).at(-1), 'change.left P-1', 'an update out of it leaves it');
    await edit({ updates: [{ attributes: { objectid: closed, owner: 'Grace' } }] });
    await edit({ updates: [{ attributes: { objectid: closed, status: 'Open' } }] });
    t.same((await upTo(4)).at(-1), 'change.entered P-2', 'an update outside it is dropped; one into it enters');
    await edit({ deletes: [closed] });
    t.same(await upTo(5), ['change.entered P-1', 'change.updated P-1', 'change.left P-1', 'change.entered P-2', 'change.left P-2']);
    t.match(events.at(-1), { op: 'd', before: { attributes: { status: 'Open' } } }, 'a delete of a feature that was in it leaves it');
  },
);

t.test("a changes service's transition filter is checked at start-up like a route's", async (t) => {
  const refused = (settings: Record<string, unknown>): string => {
    try {
      loadConfig({
        GEOHOOK_CONFIG: configFile(t, { changes: { [PARCELS]: settings } }),
        ADMIN_URL: 'https://gis.example.com/arcgis/admin',
      });
    } catch (err) {
      return (err as Error).message;
    }
    return 'accepted';
  };
  t.match(refused({ emit: 'both' }), /emit needs a where/);
  t.match(refused({ where: "before.status = 'Open'", emit: 'left' }), /emit needs a where of bare names/);
  t.equal(refused({ where: "before.status = 'Open' AND after.status = 'Closed'" }), 'accepted', 'before. and after. in a where');
  t.equal(refused({ when: { field: 'status', from: 'Open', to: 'Closed' } }), 'accepted', 'when');
});

t.test(
  "a batch's previous values are written with its job's cursor past it, in one MULTI: a retry never builds the batch against its own after",
  async (t) => {
    // Were the values written alone, a retry after a crash right then would read them as the batch's before, and a
    // clause such as before.status = 'Closed' would pass events it dropped the first time.
    const { emulator, events } = await setUpParcelsChanges(t, redis, { CHANGES_TRACK: 'parcel_id,status' });
    const texts = ['write-previous.lua', 'set-job-data.lua'].map((script) =>
      readFileSync(new URL(`../../src/changes/${script}`, import.meta.url), 'utf8'),
    );
    const [writePrevious, setJobData] = texts.map((text) => createHash('sha1').update(text).digest('hex'));
    // Per client, the commands since its MULTI; the values' writes seen, and those outside a MULTI with the cursor.
    const open = new Map<string, string[]>();
    let valueWrites = 0;
    const alone: string[] = [];
    // A script is sent as its text (EVAL) or by its SHA-1 (EVALSHA).
    const script = ([command = '', body = '']: readonly string[]): string | undefined =>
      command.toLowerCase() === 'evalsha'
        ? body
        : command.toLowerCase() === 'eval'
          ? [writePrevious, setJobData][texts.indexOf(body)]
          : undefined;
    const monitor = await monitorRedis(redis.url, ({ args, source }) => {
      const command = args[0]?.toLowerCase();
      if (source === 'lua') return;
      if (command === 'multi') return void open.set(source, []);
      const block = open.get(source);
      if (command === 'exec' && block !== undefined) {
        open.delete(source);
        const values = block.filter((sha) => sha === writePrevious).length;
        valueWrites += values;
        if (values > 0 && block.at(-1) !== setJobData) alone.push(`a MULTI of ${block.join(', ')}`);
        return;
      }
      if (block !== undefined) block.push(script(args) ?? command ?? '');
      else if (script(args) === writePrevious) {
        valueWrites += 1;
        alone.push('a write of previous values outside a MULTI');
      }
    });
    t.teardown(() => monitor.close());
    t.equal((await emulator.control(`services/${PARCELS}/bulk`, { layerId: 0, count: 600 })).status, 200);
    await countChanges(events, 600);
    await waitFor("the second batch's previous values written", () => valueWrites >= 2);
    t.same(alone, [], "every write of a batch's previous values ends with its job's cursor, in the same MULTI");
  },
);
