import net from 'node:net';
import type { Test } from 'tap';

/**
 * A TCP proxy on a free loopback port to `port`, that holds every chunk `delayMs` before passing it on, in order,
 * both ways: a slow network between one client and its server (a PostgreSQL far from one geohook process).
 * Closed at teardown of `t`, with its connections. Resolves to its port.
 */
export async function startSlowProxy(t: Test, port: number, delayMs: number): Promise<number> {
  const sockets = new Set<net.Socket>();
  const relay = (from: net.Socket, to: net.Socket): void => {
    from.on('data', (chunk) => void setTimeout(() => to.write(chunk), delayMs));
    from.on('end', () => void setTimeout(() => to.end(), delayMs));
    from.on('error', () => to.destroy());
    from.on('close', () => void setTimeout(() => to.destroy(), delayMs));
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(port, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    }
    relay(client, upstream);
    relay(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  return (server.address() as net.AddressInfo).port;
}
