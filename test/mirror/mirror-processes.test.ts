import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { applyEdits } from '@esri/arcgis-rest-feature-service';
import { ApiKeyManager } from '@esri/arcgis-rest-request';
import t from 'tap';
import { makeTempDir, removeTempDir } from '../../harness/cleanup.js';
import { layerGenerations, layerResource, mirrorDifferences, mirrorGenerations, queryFeatures } from '../../harness/faults/mirror-audit.js';
import { ReceiverProcess } from '../../harness/faults/receiver-process.js';
import { findFreePort } from '../../src/embedded/redis-server.js';
import { createStateStatements } from '../../src/mirror/table-ddl.js';
import { runCli } from '../helpers/cli.js';
import { PARCELS } from '../helpers/edits.js';
import { startEmulator } from '../helpers/emulator.js';
import { startGeohook } from '../helpers/geohook.js';
import { startPostgres } from '../helpers/postgres.js';
import { uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { startSlowProxy } from '../helpers/slow-proxy.js';
import { waitFor } from '../helpers/wait.js';

t.setTimeout(300_000);
const redis = await startRedis(t);
const postgres = await startPostgres(t);

/** The application name of the rebuild's connections (the syncs' have none). */
const REBUILD = 'rebuild';

/** The one-way delays of the far processes' links to PostgreSQL. */
const FAR_DELAYS_MS = [30, 60];

const square = (x: number) => ({
  rings: [
    [
      [x, 0],
      [x, 40],
      [x + 40, 40],
      [x + 40, 0],
      [x, 0],
    ],
  ],
  spatialReference: { wkid: 102100 },
});

t.test(
  'several geohook processes mirror one service: no generation in mirror_state goes back, under edits, a SIGKILL and a rebuild',
  async (t) => {
    const emulator = await startEmulator(t);
    const url = `${emulator.url}/arcgis/rest/services/Hosted/Parcels/FeatureServer`;
    const token = await emulator.token();
    const authentication = ApiKeyManager.fromKey(token);
    const seeded = await applyEdits({
      url: `${url}/0`,
      authentication,
      adds: Array.from({ length: 20 }, (_, index) => ({ attributes: { parcel_id: `P-${index}` }, geometry: square(index * 100) as never })),
    });
    const live = seeded.addResults.map((result) => result.objectId);

    // Every write of a layer's generation over another, recorded by PostgreSQL itself.
    const schema = 'shared';
    const client = await postgres.connect(t);
    for (const statement of createStateStatements(schema)) await client.query(statement);
    await client.query('CREATE TABLE public.generation_writes (service text, layer integer, old_gen bigint, new_gen bigint, writer text)');
    await client.query(`CREATE FUNCTION public.record_generation() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
      INSERT INTO public.generation_writes VALUES (NEW.service, NEW.layer, OLD.server_gen, NEW.server_gen, current_setting('application_name'));
      RETURN NEW; END $$`);
    await client.query(
      `CREATE TRIGGER record_generation AFTER UPDATE ON ${schema}.mirror_state FOR EACH ROW EXECUTE FUNCTION public.record_generation()`,
    );

    const env = {
      ADMIN_URL: emulator.baseUrl,
      ADMIN_USERNAME: 'admin',
      ADMIN_PASSWORD: 'admin.pass',
      GEOHOOK_PREFIX: uniquePrefix(),
      MIRROR: PARCELS,
      MIRROR_DATABASE_URL: postgres.url,
      MIRROR_SCHEMA: schema,
    };
    // The receiver the webhook delivers to, which mirrors too; a process far from PostgreSQL (its syncs read
    // mirror_state long before they get the lock); and a `geohook serve` process, SIGKILLed midway.
    const receiving = await startGeohook(t, redis, { ...env, REGISTER: PARCELS });
    await waitFor('registered', async () => (await receiving.readyz()).status === 200);
    const far = [];
    for (const delayMs of FAR_DELAYS_MS) {
      const farUrl = new URL(postgres.url);
      farUrl.port = String(await startSlowProxy(t, postgres.port, delayMs));
      far.push(await startGeohook(t, redis, { ...env, MIRROR_DATABASE_URL: farUrl.href }));
    }
    const dir = makeTempDir('mirror-processes');
    t.teardown(() => removeTempDir(dir));
    const served = new ReceiverProcess({
      port: await findFreePort(),
      redisUrl: redis.url,
      prefix: env.GEOHOOK_PREFIX,
      secret: 'mirror-processes-secret',
      durability: 'fast',
      logFile: join(dir, 'serve.log'),
      readyTimeoutMs: 120_000,
      env,
    });
    await served.start();
    t.teardown(() => served.kill());

    let rebuilding: ReturnType<typeof runCli> | undefined;
    for (let call = 0; call < 40; call += 1) {
      if (call === 10) await served.kill();
      if (call === 20)
        rebuilding = runCli(['mirror', 'rebuild', '--service', PARCELS], { env: { ...env, REDIS_URL: redis.url, PGAPPNAME: REBUILD } });
      const target = live[call % live.length]!;
      const answer = await applyEdits({
        url: `${url}/0`,
        authentication,
        adds: [{ attributes: { parcel_id: `A-${call}` }, geometry: square(5000 + call * 100) as never }],
        updates: [{ attributes: { objectid: target, owner: `owner ${call}` } }],
        deletes: call % 4 === 3 ? [live[(call + 1) % live.length]!] : [],
      });
      for (const result of answer.deleteResults) live.splice(live.indexOf(result.objectId), 1);
      live.push(...answer.addResults.map((result) => result.objectId));
      // A pace the syncs keep up with: each edit gets a range of its own, or a few.
      await sleep(150);
    }
    const rebuilt = await rebuilding!;
    t.equal(rebuilt.code, 0, rebuilt.stderr);

    await waitFor(
      'the mirror at the layers’ generation',
      async () => {
        const [server, mirror] = await Promise.all([layerGenerations(url, token), mirrorGenerations(client, schema, PARCELS)]);
        const newest = Math.max(...server.values());
        return server.size === mirror.size && [...mirror.values()].every((gen) => gen === newest);
      },
      { timeoutMs: 120_000 },
    );
    // A sync writes over the generation it started from, so it moves it forward; a rebuild may write the same again.
    const { rows } = await client.query<{ layer: number; old_gen: string; new_gen: string; writer: string }>(
      'SELECT layer, old_gen, new_gen, writer FROM public.generation_writes WHERE new_gen < old_gen OR (new_gen = old_gen AND writer <> $1)',
      [REBUILD],
    );
    t.same(rows, [], 'every sync moved the generation forward');
    t.ok(
      (await client.query('SELECT 1 FROM public.generation_writes WHERE writer = $1', [REBUILD])).rowCount! > 0,
      'the rebuild wrote the generations',
    );
    for (const [index, process] of far.entries()) t.match(process.log(), 'mirroring the services', `far process ${index} mirrors`);
    for (const [layer, table] of [
      [0, 'parcels_parcels'],
      [1, 'parcels_inspections'],
    ] as const) {
      const differences = await mirrorDifferences(
        client,
        { schema, table, layer: await layerResource(url, layer, token) },
        await queryFeatures(url, layer, token),
      );
      t.same(differences, [], `${table} equals its layer`);
    }
  },
);
