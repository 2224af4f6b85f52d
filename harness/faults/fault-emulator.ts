import type { FastifyInstance } from 'fastify';
import { buildEmulator } from '../../src/emulator/build-emulator.js';

/** The admin-API emulator of a scenario, in this process. */
export interface FaultEmulator {
  app: FastifyInstance;
  /** `http://127.0.0.1:<port>` */
  url: string;
}

/**
 * Builds the emulator (its own logs silenced) and listens on a free loopback port; the caller closes `app`.
 * `beforeAnswer`, when given, is awaited before each request (`<METHOD> <path>`) is answered.
 */
export async function listenEmulator(beforeAnswer?: (request: string) => Promise<void>): Promise<FaultEmulator> {
  const app = await buildEmulator({ logLevel: 'silent' });
  if (beforeAnswer !== undefined) app.addHook('onRequest', async (request) => beforeAnswer(`${request.method} ${request.url}`));
  try {
    await app.listen({ host: '127.0.0.1', port: 0 });
  } catch (err) {
    await app.close();
    throw err;
  }
  const address = app.server.address();
  return { app, url: `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}` };
}
