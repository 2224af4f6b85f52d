/** SQLSTATEs of a sign-in PostgreSQL refused: a wrong password, or no pg_hba.conf entry for the user. */
const SIGN_IN_REFUSED = new Set(['28P01', '28000']);

/** SQLSTATEs of a server shutting down, starting up or restarting: it is back soon. */
const NOT_NOW = new Set(['57P01', '57P02', '57P03']);

/** Connection errors whose cause is the network or the server being away. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE']);

/** The parts of MIRROR_DATABASE_URL a message may name: never its password. */
function partsOf(databaseUrl: string): { address: string; host: string; port: string; user: string; database: string } {
  const url = new URL(databaseUrl);
  const host = url.hostname === '' ? 'localhost' : url.hostname;
  const port = url.port === '' ? '5432' : url.port;
  const user = decodeURIComponent(url.username);
  const database = decodeURIComponent(url.pathname.slice(1)) || user;
  return { address: `${host}:${port}`, host, port, user, database };
}

/** The `code` of a Node or pg error, or of the first error of an AggregateError (each address of a name tried). */
function codeOf(err: unknown): string | undefined {
  const { code, errors } = err as { code?: unknown; errors?: unknown };
  if (typeof code === 'string') return code;
  return Array.isArray(errors) && errors.length > 0 ? codeOf(errors[0]) : undefined;
}

/**
 * Why the mirror's PostgreSQL cannot be used at all, as one line naming its host and port (never the password),
 * the variable and the fix: nothing listening, a name that does not resolve, no answer, the sign-in refused, the
 * database missing. `undefined` for any other error (a statement refused, a bug), which is logged whole.
 */
export function databaseUnavailable(err: unknown, databaseUrl: string): string | undefined {
  if (!(err instanceof Error)) return undefined;
  const { address, host, port, user, database } = partsOf(databaseUrl);
  const where = `PostgreSQL at ${address} (MIRROR_DATABASE_URL)`;
  const code = codeOf(err);
  if (code === 'ECONNREFUSED') return `cannot reach ${where}: the connection was refused: is PostgreSQL running at ${address}?`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return `cannot reach ${where}: the host ${host} is not known: check the host in MIRROR_DATABASE_URL`;
  if (code !== undefined && SIGN_IN_REFUSED.has(code))
    return `${where} refused the sign-in of user "${user}" (${err.message}): check the user and password in MIRROR_DATABASE_URL`;
  if (code === '3D000')
    return `${where} has no database "${database}": create it: createdb -h ${host} -p ${port} -O ${user} ${database} (then CREATE EXTENSION postgis in it), or name another in MIRROR_DATABASE_URL`;
  if (code !== undefined && NOT_NOW.has(code)) return `${where} is shutting down or starting up (${err.message}): waiting for it`;
  if ((code !== undefined && UNREACHABLE.has(code)) || /^Connection terminated|timeout exceeded when trying to connect/.test(err.message))
    return `cannot reach ${where}: ${err.message}: is PostgreSQL running at ${address}, and reachable from here?`;
  return undefined;
}
