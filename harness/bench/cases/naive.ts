import { createHash } from 'node:crypto';
import { Queue } from 'bullmq';
import Fastify from 'fastify';
import rawBody from 'fastify-raw-body';
import { Redis } from 'ioredis';
import { verify } from '../../../src/signature/verify.js';
import { SIGNATURE_HEADER, WEBHOOK_PATH } from '../payloads.js';
import { NAIVE_QUEUE } from './case-names.js';
import { serveCase } from './case-server.js';

/**
 * Case b, the peer: the receiver most people would write, written fairly. The exact bytes kept by
 * fastify-raw-body, the HMAC checked with geohook's own `verify`, then one awaited BullMQ `add` per
 * delivery (job id = SHA-256 of the body, BullMQ's way to deduplicate) before the 202.
 */
await serveCase(async ({ redisUrl, prefix, secret }) => {
  const connection = new Redis(redisUrl!, { maxRetriesPerRequest: null });
  const queue = new Queue(NAIVE_QUEUE, { connection, prefix });
  await queue.waitUntilReady();
  const app = Fastify({ bodyLimit: 1_048_576 });
  await app.register(rawBody, { field: 'rawBody', global: false, encoding: false, runFirst: true });
  app.post(WEBHOOK_PATH, { config: { rawBody: true } }, async (request, reply) => {
    const raw = Buffer.isBuffer(request.rawBody) ? request.rawBody : Buffer.alloc(0);
    const signature = request.headers[SIGNATURE_HEADER];
    if (typeof signature !== 'string' || !verify([secret], raw, signature)) {
      return reply.code(401).send({ statusCode: 401, error: 'Unauthorized', message: 'bad signature' });
    }
    const id = createHash('sha256').update(raw).digest('hex');
    await queue.add('event', { id, receivedAt: new Date().toISOString(), payload: request.body }, { jobId: id });
    return reply.code(202).send({ status: 'accepted', id });
  });
  app.addHook('onClose', async () => {
    await queue.close();
    await connection.quit();
  });
  return app;
});
