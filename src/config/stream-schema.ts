import { z } from 'zod';

/** The relay formats that publish to a broker instead of POSTing (docs/streams.md). */
export const streamFormats = ['nats', 'amqp'] as const;
export type StreamFormat = (typeof streamFormats)[number];

export const isStreamFormat = (format: string): format is StreamFormat => (streamFormats as readonly string[]).includes(format);

/** What a subject or routing-key template may name. */
export const TEMPLATE_PLACEHOLDERS = ['service', 'layer', 'op', 'type'] as const;

/** @defaultValue of a `nats` route's `subject`. */
export const DEFAULT_NATS_SUBJECT = 'geohook.<service>.<layer>.<op>';
/** @defaultValue of a `nats` route's `stream`. */
export const DEFAULT_NATS_STREAM = 'GEOHOOK';
/** @defaultValue of an `amqp` route's `routingKey`. */
export const DEFAULT_AMQP_ROUTING_KEY = '<service>.<layer>.<op>';
/** @defaultValue of an `amqp` route's `exchange`. */
export const DEFAULT_AMQP_EXCHANGE = 'geohook';

/** How a stream route signs in: a user and password, a token (NATS), an NKEY seed or a credentials file (NATS). */
export interface StreamAuth {
  readonly user?: string | undefined;
  readonly password?: string | undefined;
  readonly token?: string | undefined;
  /** NATS: the NKEY seed (`SU…`) that signs the server's nonce. */
  readonly nkeySeed?: string | undefined;
  /** NATS: a `.creds` file (a user JWT and its seed), read at start. */
  readonly credsFile?: string | undefined;
}

/** TLS of a stream route: files read at start (PEM). */
export interface StreamTls {
  readonly caFile?: string | undefined;
  readonly certFile?: string | undefined;
  readonly keyFile?: string | undefined;
}

/** The fields a `nats` or `amqp` route adds to a relay route (docs/streams.md#configuration). */
export interface StreamRouteFields {
  /** `nats`: the JetStream stream, created with the subject's wildcard form when missing. @defaultValue 'GEOHOOK' */
  readonly stream?: string | undefined;
  /** `nats`: the subject template. @defaultValue 'geohook.<service>.<layer>.<op>' */
  readonly subject?: string | undefined;
  /** `amqp`: the exchange, a durable topic exchange declared when missing. @defaultValue 'geohook' */
  readonly exchange?: string | undefined;
  /** `amqp`: the routing-key template. @defaultValue '<service>.<layer>.<op>' */
  readonly routingKey?: string | undefined;
  readonly auth?: StreamAuth | undefined;
  readonly tls?: StreamTls | undefined;
}

const template = z
  .string()
  .regex(/^[A-Za-z0-9_<>.-]{1,200}$/, 'letters, digits, ".", "_", "-" and the placeholders <service>, <layer>, <op>, <type>');

/** The schema fields of {@link StreamRouteFields}. */
export const streamRouteFields = {
  stream: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, 'a JetStream stream name: letters, digits, "-" or "_"')
    .optional(),
  subject: template.optional(),
  exchange: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]{1,127}$/, 'an exchange name: letters, digits, ".", ":", "-" or "_"')
    .optional(),
  routingKey: template.optional(),
  auth: z
    .object({
      user: z.string().min(1).optional(),
      password: z.string().min(1).optional(),
      token: z.string().min(1).optional(),
      nkeySeed: z.string().min(1).optional(),
      credsFile: z.string().min(1).optional(),
    })
    .strict()
    .optional(),
  tls: z
    .object({ caFile: z.string().min(1).optional(), certFile: z.string().min(1).optional(), keyFile: z.string().min(1).optional() })
    .strict()
    .optional(),
};

/** The placeholders of a template that are not known ones, as written (`<layerId>`). */
function unknownPlaceholders(text: string): string[] {
  const known = new Set<string>(TEMPLATE_PLACEHOLDERS);
  return [...text.matchAll(/<([^<>]*)>?/g)].filter((match) => !(match[0].endsWith('>') && known.has(match[1]!))).map((match) => match[0]);
}

/** The fields only the other stream format reads, by format. */
const foreign: Record<StreamFormat, readonly (keyof StreamRouteFields)[]> = {
  nats: ['exchange', 'routingKey'],
  amqp: ['stream', 'subject'],
};

/** The schemes each format's URL takes. */
const schemes: Record<StreamFormat, readonly string[]> = { nats: ['nats:', 'tls:'], amqp: ['amqp:', 'amqps:'] };

/**
 * Checks a stream route beyond its fields' own schemas; `issue(message, path)` reports each mistake. The URL names
 * the broker without credentials (they go in `auth`, which logs never show); the fields of the other format, HTTP
 * `headers`, `secret` and `timeoutMs` have no meaning here; templates name known placeholders; `auth` is one way
 * of signing in.
 */
export function checkStreamRoute(
  route: StreamRouteFields & { format: StreamFormat; url: string; secret?: unknown; headers?: unknown },
  issue: (message: string, path: (string | number)[]) => void,
): void {
  const { format } = route;
  const urls = route.url.split(',').map((part) => part.trim());
  for (const url of urls) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      issue(`a ${format} route's url is ${schemes[format].map((scheme) => `${scheme}//host:port`).join(' or ')} (got "${url}")`, ['url']);
      continue;
    }
    if (!schemes[format].includes(parsed.protocol))
      issue(
        `a ${format} route's url starts with ${schemes[format].map((scheme) => `${scheme}//`).join(' or ')} (got "${parsed.protocol}//")`,
        ['url'],
      );
    if (parsed.username !== '' || parsed.password !== '')
      issue('the url holds credentials: put them in "auth" ({"user","password"}), which logs never show', ['url']);
  }
  if (format === 'amqp' && urls.length > 1) issue('an amqp route takes one url (a cluster: its load balancer or one node)', ['url']);
  for (const field of foreign[format])
    if (route[field] !== undefined) issue(`"${field}" is for ${format === 'nats' ? 'amqp' : 'nats'} routes`, [field]);
  if (route.secret !== undefined)
    issue(`a ${format} route is not signed: remove its secret (sign in to the broker with "auth")`, ['secret']);
  if (route.headers !== undefined) issue(`a ${format} route sets its own headers: remove "headers"`, ['headers']);
  for (const field of ['subject', 'routingKey'] as const) {
    const text = route[field];
    if (text === undefined) continue;
    for (const bad of unknownPlaceholders(text))
      issue(`${field} names ${bad}: the placeholders are <service>, <layer>, <op> and <type>`, [field]);
    if (/^\.|\.$|\.\./.test(text)) issue(`${field} has an empty token ("${text}"): tokens are separated by single dots`, [field]);
  }
  const auth = route.auth;
  if (auth !== undefined) {
    const ways = [auth.user !== undefined || auth.password !== undefined, auth.token, auth.nkeySeed, auth.credsFile].filter(Boolean).length;
    if (ways !== 1) issue('auth is one of {"user","password"}, {"token"}, {"nkeySeed"} or {"credsFile"}', ['auth']);
    if ((auth.user === undefined) !== (auth.password === undefined)) issue('auth needs both "user" and "password"', ['auth']);
    if (format === 'amqp' && (auth.token ?? auth.nkeySeed ?? auth.credsFile) !== undefined)
      issue('an amqp route signs in with {"user","password"} (or a client certificate in "tls")', ['auth']);
  }
  if ((route.tls?.certFile === undefined) !== (route.tls?.keyFile === undefined)) issue('tls needs both "certFile" and "keyFile"', ['tls']);
}
