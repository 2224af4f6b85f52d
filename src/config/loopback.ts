/** The address `geohook up` binds the receiver to unless HOST (or `--host`) says otherwise. */
export const LOOPBACK_HOST = '127.0.0.1';

/**
 * True when `host` is reachable from this machine only: `localhost`, 127.0.0.0/8, `::1` (also as
 * IPv4-mapped IPv6 or in brackets). Anything else, `0.0.0.0` and `::` first, may be reached from others.
 */
export function isLoopbackHost(host: string): boolean {
  const address = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  return address === 'localhost' || address === '::1' || /^(::ffff:)?127(\.\d{1,3}){3}$/.test(address);
}
