import { once } from 'node:events';
import { connect } from 'node:net';

/** A command as Redis's `MONITOR` reports it. */
export interface MonitoredCommand {
  /** The client that sent it (`host:port`), or `lua` for a command a script ran. */
  readonly source: string;
  /** The command's name and arguments, unescaped. */
  readonly args: readonly string[];
}

/** A `MONITOR` connection; `close` ends it. */
export interface RedisMonitor {
  close(): void;
}

/**
 * Calls `onCommand` with every command the Redis at `url` runs from the moment this resolves.
 *
 * A plain socket rather than ioredis's `monitor()`: ioredis enters its monitoring mode a microtask after `MONITOR`'s
 * `OK`, so a busy server's first line read in the same chunk is taken for a reply to no command, and the connection
 * fails with "Command queue state error".
 */
export async function monitorRedis(url: string, onCommand: (command: MonitoredCommand) => void): Promise<RedisMonitor> {
  const { hostname, port, username, password } = new URL(url);
  const socket = connect(Number(port || 6379), hostname);
  const auth = password === '' ? [] : [['AUTH', ...(username === '' ? [] : [decodeURIComponent(username)]), decodeURIComponent(password)]];
  const commands = [...auth, ['MONITOR']];
  let pendingReplies = commands.length;
  let buffered = '';
  const monitoring = new Promise<void>((resolve, reject) => {
    // Kept for the connection's life: a server stopped before this is closed must not throw.
    socket.on('error', reject);
    socket.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('latin1');
      let end: number;
      while ((end = buffered.indexOf('\r\n')) !== -1) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        if (line.startsWith('-')) return reject(new Error(`MONITOR on ${hostname}:${port} refused: ${line.slice(1)}`));
        if (pendingReplies > 0) {
          pendingReplies -= 1;
          if (pendingReplies === 0) resolve();
        } else {
          const command = parseMonitorLine(line);
          if (command !== undefined) onCommand(command);
        }
      }
    });
  });
  await once(socket, 'connect');
  for (const command of commands) socket.write(encodeCommand(command));
  await monitoring;
  return { close: () => void socket.destroy() };
}

/** `args` as a RESP array of bulk strings. */
function encodeCommand(args: readonly string[]): string {
  return `*${args.length}\r\n${args.map((arg) => `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`).join('')}`;
}

/** One line of `MONITOR` (`+<time> [<db> <source>] "<arg>" …`, read as latin1), or undefined if it is not one. */
function parseMonitorLine(line: string): MonitoredCommand | undefined {
  const match = /^\+\S+ \[\d+ (.*?)\] (".*)$/s.exec(line);
  if (match === null) return undefined;
  return { source: match[1]!, args: parseQuoted(match[2]!) };
}

/** The C escapes Redis writes in a quoted argument (`sdscatrepr`), and the byte each stands for. */
const ESCAPES: Record<string, number> = { n: 10, r: 13, t: 9, a: 7, b: 8, '"': 34, '\\': 92 };

/** The arguments of `"<arg>" "<arg>" …`, each unescaped and read as UTF-8. */
function parseQuoted(text: string): string[] {
  const args: string[] = [];
  let at = 0;
  while (at < text.length && text[at] === '"') {
    const bytes: number[] = [];
    at += 1;
    while (at < text.length && text[at] !== '"') {
      if (text[at] !== '\\') {
        bytes.push(text.charCodeAt(at));
        at += 1;
      } else if (text[at + 1] === 'x') {
        bytes.push(Number.parseInt(text.slice(at + 2, at + 4), 16));
        at += 4;
      } else {
        bytes.push(ESCAPES[text[at + 1]!] ?? text.charCodeAt(at + 1));
        at += 2;
      }
    }
    args.push(Buffer.from(bytes).toString('utf8'));
    at += 2; // the closing quote and the space after it
  }
  return args;
}
