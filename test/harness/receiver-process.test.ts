import { once } from 'node:events';
import { createServer } from 'node:http';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { makeTempDir, removeTempDir } from '../../harness/cleanup.js';
import { ReceiverProcess } from '../../harness/faults/receiver-process.js';
import { findFreePort } from '../../src/embedded/redis-server.js';
import { uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';

/** Another process's server on `port` (another fault row's receiver): 200 on every path, `impostor` in the body. */
async function startImpostor(t: Test, port: number): Promise<void> {
  const server = createServer((_request, response) => response.end('impostor'));
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => new Promise((resolve) => server.close(resolve)));
}

async function receiverOn(t: Test, port: number): Promise<ReceiverProcess> {
  const redis = await startRedis(t);
  const dir = makeTempDir('receiver-process');
  t.teardown(() => removeTempDir(dir));
  const receiver = new ReceiverProcess({
    port,
    redisUrl: redis.url,
    prefix: uniquePrefix(),
    secret: 'receiver-process-secret',
    durability: 'fast',
    logFile: join(dir, 'receiver.log'),
  });
  t.teardown(() => receiver.kill());
  return receiver;
}

const healthOf = async (url: string): Promise<string> => (await fetch(`${url}/healthz`)).text();

t.test('a receiver whose port another server answers on starts on another port, not taking that server for itself', async (t) => {
  const port = await findFreePort();
  await startImpostor(t, port);
  const receiver = await receiverOn(t, port);
  await receiver.start();
  t.not(receiver.url, `http://127.0.0.1:${port}`, 'it moved to another port');
  t.same(JSON.parse(await healthOf(receiver.url)), { status: 'ok' }, 'the receiver answers on its URL');
});

t.test('a receiver started again after its port was taken fails, rather than take the server there for itself', async (t) => {
  const receiver = await receiverOn(t, await findFreePort());
  await receiver.start();
  const { url } = receiver;
  await receiver.kill();
  await startImpostor(t, Number(new URL(url).port));
  await t.rejects(receiver.start(), /was taken by another process/);
  t.equal(await healthOf(url), 'impostor', 'the port is still the other server’s');
});
