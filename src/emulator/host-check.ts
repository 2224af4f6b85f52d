import { isIP } from 'node:net';

/** The names of the loopback interface that every emulator answers to. */
export const LOOPBACK_NAMES: readonly string[] = ['127.0.0.1', 'localhost', '::1'];

/** A `Host` header: a name, an IPv4 address or a bracketed IPv6 address, then an optional port; nothing else. */
const HOST_HEADER = /^(\[[0-9a-f:.]+\]|[^[\]:@/\\?#\s]+)(?::\d{1,5})?$/i;

/** `name` lower-cased, without IPv6 brackets, a trailing dot or the `::ffff:` of an IPv4-mapped address. */
function normalize(name: string): string {
  const bare = name
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
  return bare.startsWith('::ffff:') && isIP(bare.slice(7)) === 4 ? bare.slice(7) : bare;
}

/** The host name of a `Host` header (port, brackets and case dropped); undefined when it is not one. */
export function hostNameOf(header: string | undefined): string | undefined {
  const match = header === undefined ? null : HOST_HEADER.exec(header.trim());
  return match === null ? undefined : normalize(match[1]!);
}

/** True when `host` (a name or an address, as given to `--host`) is the loopback interface. */
export function isLoopbackHost(host: string): boolean {
  const name = normalize(host);
  return name === 'localhost' || name === '::1' || (isIP(name) === 4 && name.startsWith('127.'));
}

/** The wildcard addresses: a listen address, never a name a client asks for. */
const WILDCARDS = new Set(['0.0.0.0', '::']);

/**
 * The DNS-rebinding defence: a request is answered only when its `Host` header names the loopback interface,
 * one of `allowed` (wildcard addresses aside), or the very address the connection arrived at. A page on
 * another site whose name resolves to this machine sends its own name, and is refused.
 */
export function createHostCheck(allowed: readonly string[]): (header: string | undefined, localAddress: string | undefined) => boolean {
  const names = new Set([...LOOPBACK_NAMES, ...allowed].map(normalize).filter((name) => !WILDCARDS.has(name)));
  return (header, localAddress) => {
    const name = hostNameOf(header);
    if (name === undefined) return false;
    return names.has(name) || (localAddress !== undefined && name === normalize(localAddress));
  };
}
