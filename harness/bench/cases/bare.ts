import Fastify from 'fastify';
import { WEBHOOK_PATH } from '../payloads.js';
import { serveCase } from './case-server.js';

/** Case a, the ceiling: bare Fastify (default JSON parser, no logger) answering 204. */
await serveCase(async () => {
  const app = Fastify({ bodyLimit: 1_048_576 });
  app.post(WEBHOOK_PATH, async (_request, reply) => reply.code(204).send());
  return app;
});
