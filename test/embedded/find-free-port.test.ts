import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import t from 'tap';
import { findFreePort } from '../../src/embedded/redis-server.js';

const PORT_RANGE = '/proc/sys/net/ipv4/ip_local_port_range';

t.test(
  'a free port is picked below the ports of outgoing connections, so that none of those takes it, and can be listened on',
  { skip: existsSync(PORT_RANGE) ? false : 'not Linux' },
  async (t) => {
    const firstEphemeral = Number(readFileSync(PORT_RANGE, 'utf8').trim().split(/\s+/)[0]);
    const ports = await Promise.all(Array.from({ length: 10 }, () => findFreePort()));
    for (const port of ports) t.ok(port >= 20_000 && port < firstEphemeral, `${port} below ${firstEphemeral}`);
    const server = createServer();
    server.listen(ports[0], '127.0.0.1');
    await once(server, 'listening');
    server.close();
  },
);
