const SCHEME = /^([a-z][a-z0-9+.-]*):\/\//i;

/**
 * A URL-like value as a message that refuses it may quote it: its scheme and host, then `…` for anything else. Never
 * its user name, password, path, query or fragment, which may hold secrets (a database password, the key of an
 * incoming webhook). A host that cannot be told apart from a password (an `@` the URL parser did not read as the end
 * of credentials) is left out too.
 */
export function urlOutline(value: string): string {
  const scheme = SCHEME.exec(value)?.[0] ?? '';
  const parseable = scheme === '' ? `placeholder://${value}` : value;
  const parsed = URL.canParse(parseable) ? new URL(parseable) : undefined;
  const host = parsed === undefined || (value.includes('@') && parsed.username === '') ? '' : parsed.host;
  const shown = `${scheme.toLowerCase()}${host}`;
  return shown === value ? shown : `${shown}…`;
}
