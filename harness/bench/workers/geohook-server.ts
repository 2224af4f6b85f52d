import pino from 'pino';
import { boundHeapGrowth } from '../../../src/cli/heap-growth.js';
import { loadConfig } from '../../../src/config/load-config.js';
import { startServer } from '../../../src/server.js';
import type { ServerStats } from '../cases/case-server.js';
import { notifyParent, serveParent } from '../ipc.js';

/**
 * geohook's server (`startServer`, as `geohook serve` runs it) in a process of its own, so that its peak RSS and
 * CPU are its own, with the heap growth the CLI bounds. Started with the configuration's variables as JSON; logs nothing.
 */
boundHeapGrowth();
const config = loadConfig(JSON.parse(process.argv[2] ?? '{}') as Record<string, string>);
const server = await startServer(config, { logger: pino({ level: 'silent' }) });
serveParent({
  stats: (): Omit<ServerStats, 'acked'> => {
    const cpu = process.cpuUsage();
    return { maxRssMb: process.resourceUsage().maxRSS / 1024, cpuMs: (cpu.user + cpu.system) / 1000 };
  },
  close: () => server.close(),
});
notifyParent('ready', { url: config.publicUrl });
