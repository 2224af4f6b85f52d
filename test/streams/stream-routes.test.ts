import { applyEdits } from '@esri/arcgis-rest-feature-service';
import { ApiKeyManager } from '@esri/arcgis-rest-request';
import { Redis } from 'ioredis';
import { connect, type JsMsg, type NatsConnection } from 'nats';
import t, { type Test } from 'tap';
import type { ChangeEvent } from '../../src/changes/change-event.js';
import { loadConfig } from '../../src/config/load-config.js';
import { readRelayStatus } from '../../src/relay/relay-status.js';
import { PARCELS } from '../helpers/edits.js';
import { startEmulator } from '../helpers/emulator.js';
import { registrationEnv, startGeohook } from '../helpers/geohook.js';
import { startNats, type TestNats } from '../helpers/nats.js';
import { configFile, uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const redis = await startRedis(t);
const nats = await startNats(t);

/** A connection of the official client, closed at teardown. */
async function natsClient(t: Test, server: TestNats): Promise<NatsConnection> {
  const connection = await connect({ servers: server.url });
  t.teardown(() => connection.close());
  return connection;
}

/** How many messages `stream` holds. */
async function storedCount(connection: NatsConnection, stream: string): Promise<number> {
  return (await (await connection.jetstreamManager()).streams.info(stream)).state.messages;
}

/** Every message of `stream`, read by an ordered consumer of the official client. */
async function readStream(connection: NatsConnection, stream: string): Promise<JsMsg[]> {
  const total = await storedCount(connection, stream);
  const messages: JsMsg[] = [];
  for await (const message of await (await connection.jetstream().consumers.get(stream)).consume()) {
    messages.push(message);
    if (messages.length >= total) break;
  }
  return messages;
}

t.test('geohook with a nats route in GEOHOOK_CONFIG publishes the change events of edits, and relay status counts them', async (t) => {
  const emulator = await startEmulator(t);
  const prefix = uniquePrefix();
  const route = { name: 'edits', url: nats.url, types: ['change.*'], format: 'nats', stream: 'EDITS' };
  const geohook = await startGeohook(t, redis, {
    ...registrationEnv(emulator, [PARCELS], prefix),
    CHANGES: PARCELS,
    GEOHOOK_CONFIG: configFile(t, { relays: [route] }),
  });
  await waitFor('registered', async () => (await geohook.readyz()).status === 200);
  const url = `${emulator.url}/arcgis/rest/services/Hosted/Parcels/FeatureServer/0`;
  const authentication = ApiKeyManager.fromKey(await emulator.token());
  await applyEdits({
    url,
    authentication,
    adds: [{ attributes: { parcel_id: 'N1', status: 'Open' } }, { attributes: { parcel_id: 'N2', status: 'Open' } }],
  });
  const client = await natsClient(t, nats);
  await waitFor('two change events in the stream', async () => (await storedCount(client, 'EDITS').catch(() => 0)) >= 2, {
    timeoutMs: 40_000,
  });
  const messages = await readStream(client, 'EDITS');
  t.same(messages.map((message) => message.json<ChangeEvent>().after?.attributes.parcel_id).sort(), ['N1', 'N2']);
  t.ok(
    messages.every((message) => message.subject === 'geohook.Hosted_Parcels_FeatureServer.0.c'),
    'created: op c',
  );
  const config = loadConfig({ REDIS_URL: redis.url, GEOHOOK_PREFIX: prefix, GEOHOOK_CONFIG: configFile(t, { relays: [route] }) });
  const connection = new Redis(redis.url);
  t.teardown(() => connection.disconnect());
  const status = await waitFor('delivered counted', async () => {
    const read = await readRelayStatus(connection, prefix, config.relays);
    return read.routes[0]!.delivered >= 2 ? read : undefined;
  });
  t.match(status.routes[0], { name: 'edits', format: 'nats', delivered: 2, deadLetters: 0, pending: 0 });
});
