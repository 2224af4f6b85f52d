import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** The kernel's TCP socket tables (Linux). */
const TCP_TABLES = ['/proc/net/tcp', '/proc/net/tcp6'];
/** `st` of a listening socket in those tables. */
const LISTEN = '0A';

/** Inodes of the sockets listening on `port` (any address); undefined where the kernel has no such tables (not Linux). */
function listeningInodes(port: number): Set<string> | undefined {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const inodes = new Set<string>();
  let read = false;
  for (const table of TCP_TABLES) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    read = true;
    // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode …
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[3] === LISTEN && fields[1]?.endsWith(`:${hexPort}`) === true && fields[9] !== undefined) inodes.add(fields[9]);
    }
  }
  return read ? inodes : undefined;
}

/**
 * Whether process `pid` holds a socket listening on `port`: a 200 on the port is then its own, not another
 * process's. Undefined where that cannot be told (not Linux).
 */
export function listensOn(pid: number, port: number): boolean | undefined {
  const inodes = listeningInodes(port);
  if (inodes === undefined) return undefined;
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false; // gone
  }
  return fds.some((fd) => {
    try {
      return inodes.has(/^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1] ?? '');
    } catch {
      return false; // closed meanwhile
    }
  });
}

/** Whether some process listens on `port`; undefined where that cannot be told (not Linux). */
export function isListenedOn(port: number): boolean | undefined {
  const inodes = listeningInodes(port);
  return inodes === undefined ? undefined : inodes.size > 0;
}
