import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pino from 'pino';
import t from 'tap';
import { relayInboxKey } from '../../src/redis/keys.js';
import { RelayFanout } from '../../src/relay/relay-fanout.js';
import { startRelayInbox } from '../../src/relay/relay-inbox.js';
import { relayQueueName } from '../../src/relay/relay-queues.js';
import { createRelayRoute } from '../../src/relay/relay-route.js';
import { envelopeOf } from '../helpers/envelope.js';
import { uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const redis = await startRedis(t);

t.test('three receivers drain one relay inbox together: every event one job of each route that takes it, the inbox emptied', async (t) => {
  const prefix = uniquePrefix();
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  t.teardown(() => connection.disconnect());
  const routes = [
    createRelayRoute({ name: 'features', url: 'http://127.0.0.1:1/f', types: ['feature.*'], format: 'teams' }),
    createRelayRoute({ name: 'gp', url: 'http://127.0.0.1:1/g', types: ['gp.*'], format: 'slack' }),
  ];
  const features = Array.from({ length: 1500 }, () => envelopeOf('feature'));
  const gp = Array.from({ length: 500 }, () => envelopeOf('gp'));
  const all = features.flatMap((event, index) => (index % 3 === 0 ? [event, gp[index / 3]!] : [event]));
  // Pushed while the receivers drain, as the accept script would.
  const push = (async () => {
    for (let start = 0; start < all.length; start += 100)
      await connection.rpush(relayInboxKey(prefix), ...all.slice(start, start + 100).map((event) => JSON.stringify(event)));
  })();
  const receivers = [0, 1, 2].map(() => {
    const fanout = new RelayFanout(connection, { routes, prefix, completedJobs: { ageSeconds: 3600, count: 10_000 } });
    const inbox = startRelayInbox({ connection, prefix, fanout, logger: pino({ level: 'silent' }), batch: 70, idleMs: 5 });
    return { fanout, inbox };
  });
  t.teardown(async () => {
    for (const { fanout, inbox } of receivers) {
      await inbox.close();
      await fanout.close();
    }
  });
  await push;
  await waitFor('the inbox emptied', async () => (await connection.llen(relayInboxKey(prefix))) === 0);
  for (const [name, events] of [
    ['features', features],
    ['gp', gp],
  ] as const) {
    const queue = new Queue(relayQueueName(name), { connection, prefix });
    const ids = (await queue.getJobs(['wait', 'prioritized'], 0, -1)).map((job) => job.id!);
    await queue.close();
    t.equal(ids.length, events.length, `${name}: one job per event`);
    t.same(new Set(ids), new Set(events.map((event) => event.id)), `${name}: the events' ids`);
  }
});
