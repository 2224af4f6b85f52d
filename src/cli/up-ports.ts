import { once } from 'node:events';
import { createServer } from 'node:net';
import { GeohookError, listenFailure } from '../errors.js';

/** A port `geohook up` is to listen on: what listens there, and the setting that moves it. */
export interface UpPort {
  /** E.g. "the receiver". */
  what: string;
  host: string;
  /** 0: one the system picks, never in use. */
  port: number;
  /** The variable that moves it, e.g. `PORT`. */
  variable: string;
  /** Its flag, e.g. `--port`. */
  flag: string;
}

/** Whether listening on `host:port` fails because the port is in use; any other failure is left to the real listen. */
async function inUse(host: string, port: number): Promise<boolean> {
  const server = createServer();
  try {
    server.listen(port, host);
    await once(server, 'listening');
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EADDRINUSE';
  } finally {
    server.close();
  }
}

/**
 * Tries every port `up` is to listen on before it starts anything, so that all those in use are said in one
 * `GEOHOOK_ERR_PORT_IN_USE` error, each with its address and the setting that moves it, instead of one per start.
 * A port taken between this check and the listen is still said by the listen's own error.
 */
export async function assertPortsFree(ports: readonly UpPort[]): Promise<void> {
  const checked = await Promise.all(
    ports.map(async (entry) => ({ entry, taken: entry.port !== 0 && (await inUse(entry.host, entry.port)) })),
  );
  const taken = checked.filter(({ taken }) => taken).map(({ entry }) => entry);
  if (taken.length === 0) return;
  if (taken.length === 1) {
    const [{ what, host, port, variable, flag }] = taken as [UpPort];
    throw listenFailure(Object.assign(new Error('in use'), { code: 'EADDRINUSE' }), what, `${host}:${port}`, `${variable} (or ${flag})`);
  }
  const each = taken.map(({ what, host, port, variable, flag }) => `${what} on ${host}:${port} (${flag} or ${variable} moves it)`);
  throw new GeohookError(
    'GEOHOOK_ERR_PORT_IN_USE',
    `${taken.length} ports are in use (by other programs, or another geohook): ${each.join(', ')}`,
  );
}
