import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import t from 'tap';
import { changeEventsQueueName } from '../../src/changes/change-event.js';
import { consumeChanges } from '../helpers/change-consumer.js';
import { PARCELS } from '../helpers/edits.js';
import { deliveriesEnded, startEmulator } from '../helpers/emulator.js';
import { registrationEnv, startGeohook, type TestGeohook } from '../helpers/geohook.js';
import { uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { queueDrained, waitFor } from '../helpers/wait.js';

const redis = await startRedis(t);

/**
 * A loopback proxy that hands each delivery to two receivers in turn, the same bytes and headers each time (a
 * duplicated delivery, reaching two processes), and answers with the first one's answer.
 */
async function duplicatingProxy(targets: () => readonly string[]): Promise<{ url: string; forwarded: () => number }> {
  let next = 0;
  let forwarded = 0;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      const headers = Object.fromEntries(
        Object.entries(request.headers).filter(
          (entry): entry is [string, string] =>
            typeof entry[1] === 'string' && !['host', 'content-length', 'connection'].includes(entry[0]),
        ),
      );
      const all = targets();
      const chosen = [all[next % all.length]!, all[(next + 1) % all.length]!];
      next += 1;
      void (async () => {
        const answers = [];
        for (const target of chosen) {
          forwarded += 1;
          answers.push(await fetch(`${target}${request.url ?? '/'}`, { method: request.method ?? 'POST', headers, body }));
        }
        response.writeHead(answers[0]!.status, { 'content-type': 'application/json' });
        response.end(await answers[0]!.text());
      })().catch(() => {
        response.writeHead(502);
        response.end();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, forwarded: () => forwarded };
}

t.test(
  'three receivers; every delivery sent twice to two of them, some lost and backfilled, polling on: each feature version is one change event',
  async (t) => {
    const emulator = await startEmulator(t);
    const prefix = uniquePrefix();
    const receivers: TestGeohook[] = [];
    const proxy = await duplicatingProxy(() => receivers.map((receiver) => receiver.url));
    const env = {
      ...registrationEnv(emulator, [PARCELS], prefix),
      PUBLIC_URL: proxy.url,
      CHANGES: PARCELS,
      CHANGES_TRACK: 'status',
      POLL: PARCELS,
      POLL_INTERVAL_SECONDS: '1',
    };
    for (let index = 0; index < 3; index += 1) receivers.push(await startGeohook(t, redis, env));
    for (const receiver of receivers) await waitFor('ready', async () => (await receiver.readyz()).status === 200);

    const events = await consumeChanges(t, redis.url, prefix);

    const raw = new Redis(redis.url);
    const changes = new Queue(changeEventsQueueName, { connection: raw, prefix });
    t.teardown(async () => {
      await changes.close();
      raw.disconnect();
    });
    const resolved = async (): Promise<number> => Number(await raw.hget(`${prefix}:changes:resolved`, `default ${PARCELS}`));
    // One edit resolved before the next: edits that share a range are its net change (an add then an update is one create).
    const edit = async (edits: unknown, lose: boolean): Promise<void> => {
      const { body } = await emulator.control(`services/${PARCELS}/applyEdits`, { edits, lose });
      await waitFor('the edit resolved', async () => (await resolved()) >= (body.serverGen as number));
    };
    const expected: string[] = [];
    for (let index = 1; index <= 6; index += 1) {
      await edit([{ id: 0, adds: [{ attributes: { parcel_id: `P-${index}`, status: 'Open' } }] }], index % 3 === 0);
      expected.push(`change.created ${index}`);
    }
    for (let index = 1; index <= 6; index += 2) {
      await edit([{ id: 0, updates: [{ attributes: { objectid: index, status: 'Closed' } }] }], index === 3);
      expected.push(`change.updated ${index}`);
    }
    await waitFor('every change event', () => events.length >= expected.length);
    // Deliveries (each copy is sent before the server hears back), gap fills and polls still coming add nothing: once
    // every delivery ended and every gap is filled, a later edit's range is claimed after anything they could move,
    // and its event comes after any event of theirs.
    await deliveriesEnded(emulator);
    await queueDrained(receivers[0]!.server.app.eventQueue.backfillQueue(), 'the gaps filled');
    await edit([{ id: 0, adds: [{ attributes: { parcel_id: 'P-7', status: 'Open' } }] }], false);
    expected.push('change.created 7');
    await waitFor("the later edit's event", () => events.some((event) => event.key.objectId === 7));
    await queueDrained(changes, 'every change event consumed');
    t.same(events.map((event) => `${event.type} ${String(event.key.objectId)}`).sort(), expected.sort(), 'each version once');
    t.equal(new Set(events.map((event) => event.id)).size, events.length, 'no id twice');
    // Seven edits were delivered (three were lost): each delivery reached two receivers.
    t.ok(proxy.forwarded() >= 14, `every delivery handed to two receivers (${proxy.forwarded()} forwarded)`);
    t.ok(
      events.filter((event) => event.type === 'change.updated').every((event) => event.changedFields?.includes('status')),
      'every update knows the status it replaced',
    );
  },
);
