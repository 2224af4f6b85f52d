import { buildEmulator } from '../../../src/emulator/build-emulator.js';
import type { ServerStats } from '../cases/case-server.js';
import { notifyParent, serveParent } from '../ipc.js';

/** The emulator in a process of its own (logs at `warn`: no line per delivery). */
const app = await buildEmulator({ logLevel: 'warn' });
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
serveParent({
  stats: (): Omit<ServerStats, 'acked'> => {
    const cpu = process.cpuUsage();
    return { maxRssMb: process.resourceUsage().maxRSS / 1024, cpuMs: (cpu.user + cpu.system) / 1000 };
  },
  close: () => app.close(),
});
notifyParent('ready', { port: typeof address === 'object' && address !== null ? address.port : 0 });
