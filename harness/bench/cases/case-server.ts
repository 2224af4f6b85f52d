import type { FastifyInstance } from 'fastify';
import { notifyParent, serveParent } from '../ipc.js';

/** What the bench tells a case server (JSON in its first argument). */
export interface CaseParams {
  redisUrl?: string;
  prefix: string;
  secret: string;
}

/** What a case server reports: its own figures, read in its own process. */
export interface ServerStats {
  /** Peak RSS of the process so far (getrusage), MiB. */
  maxRssMb: number;
  /** CPU time used so far (user + system), ms. */
  cpuMs: number;
  /** Replies sent with a 2xx status: each one is a promise that the event is stored. */
  acked: number;
}

/**
 * Runs a case in this process: builds its Fastify app, counts the 2xx replies it decides on (an `onSend`
 * hook, added to every case alike, so that the bench can check one job per acknowledgement even for the
 * requests autocannon abandons when it stops), listens on a free loopback port and reports `ready`.
 */
export async function serveCase(build: (params: CaseParams) => Promise<FastifyInstance>): Promise<void> {
  const params = JSON.parse(process.argv[2] ?? '{}') as CaseParams;
  const app = await build(params);
  let acked = 0;
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (reply.statusCode >= 200 && reply.statusCode < 300) acked += 1;
    done(null, payload);
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  serveParent({
    stats: (): ServerStats => {
      const cpu = process.cpuUsage();
      return { maxRssMb: process.resourceUsage().maxRSS / 1024, cpuMs: (cpu.user + cpu.system) / 1000, acked };
    },
    close: () => app.close(),
  });
  notifyParent('ready', { port: typeof address === 'object' && address !== null ? address.port : 0 });
}
