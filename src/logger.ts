import type { FastifyReply, FastifyRequest, LogController } from 'fastify';
import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { fastify } from './commonjs/fastify.js';
import { loadPinoPretty } from './commonjs/pino-pretty.js';

/** Inputs of {@link createLoggerOptions}. */
export interface LoggerSettings {
  /** pino level. @defaultValue 'info' */
  level?: string;
  /** Lower-cased names of the headers that carry signatures; their values never reach a log line. */
  signatureHeaders?: readonly string[];
}

/** How log lines are written: one JSON object per line, or one readable line for a person. */
export type LogFormat = 'json' | 'pretty';

const SECRET_FIELDS = ['secrets', 'secret', 'signatureKey', 'token', 'password', 'pass', 'nkeySeed', 'auth'];

/** Every `%XX` (and IIS's `%uXXXX`) of `text` as the character it encodes; a malformed sequence is left as it is. */
const percentDecoded = (text: string): string =>
  text.replace(/%u([0-9a-f]{4})|%([0-9a-f]{2})/gi, (_match, wide: string | undefined, hex: string | undefined) =>
    String.fromCharCode(parseInt(wide ?? hex!, 16)),
  );

/**
 * True when some server could read the query parameter name `name` as `token`: with `+` as a space, decoded
 * once or several times, in any case, with spaces, brackets and other punctuation ignored (`%74oken`,
 * `TOKEN`, `%2574oken`, `token[]`). Redacting a parameter too many beats logging a token.
 */
function readsAsToken(name: string): boolean {
  let text = name;
  for (let round = 0; round < 4; round += 1) {
    if (text.toLowerCase().replace(/[^a-z0-9_]/g, '') === 'token') return true;
    const decoded = percentDecoded(text.replace(/\+/g, ' '));
    if (decoded === text) return false;
    text = decoded;
  }
  return false;
}

/**
 * `url` with the value of every query parameter whose name reads as `token` censored (the dashboard's sign-in
 * link, ArcGIS clients). The query starts at the first `?`, `#` (Fastify's router takes either) or `;`; its
 * parameters are split at `&`, `;`, `?` and `#` alike, so that no parser finds a pair the redaction missed.
 */
function withoutTokens(url: string): string {
  const start = url.search(/[?#;]/);
  if (start === -1) return url;
  const query = url
    .slice(start)
    .replace(/([?#&;])([^?#&;=]*)=[^?#&;]*/g, (pair, separator: string, name: string) =>
      readsAsToken(name) ? `${separator}${name}=[redacted]` : pair,
    );
  return url.slice(0, start) + query;
}

/** A relay route as logged: a route object by its name, format and types only; a route's name as it is. */
function routeForLog(route: unknown): unknown {
  if (typeof route !== 'object' || route === null) return route;
  const { name, format, types } = route as Record<string, unknown>;
  return { name, format, types };
}

/** A logged Redis URL with its password censored (`redis://user:[redacted]@host:port`). */
function withoutPassword(url: unknown): unknown {
  return typeof url === 'string' ? url.replace(/^([a-z][a-z\d+.-]*:\/\/[^:@/]*:)[^@/]*@/i, '$1[redacted]@') : url;
}

/**
 * The Redis command an ioredis error carries, as logged: its name and how many arguments, never the arguments
 * (`AUTH` and `HELLO` carry the password, the accept script's the events).
 */
function commandForLog(command: unknown): unknown {
  if (typeof command !== 'object' || command === null) return command;
  const { name, args } = command as { name?: unknown; args?: unknown };
  return { name, args: Array.isArray(args) ? `[${args.length} redacted]` : '[redacted]' };
}

/**
 * pino options shared by every geohook process: signature headers, credentials and keys are censored
 * wherever they appear in a logged object, at the top level or one level down, tokens in URLs, and the
 * password of a logged `redisUrl`.
 */
export function createLoggerOptions(settings: LoggerSettings = {}): LoggerOptions {
  const headers = ['authorization', 'cookie', ...(settings.signatureHeaders ?? ['x-service', 'x-esrihook-signature'])];
  return {
    level: settings.level ?? 'info',
    serializers: {
      // An error's `response` (an admin API answer) is left out: what a server answers is no log's business; a
      // Redis error's command keeps its name only.
      err: (err: Error) => {
        const { response: _response, ...serialized } = pino.stdSerializers.err(err) as Record<string, unknown>;
        if ('command' in serialized) serialized.command = commandForLog(serialized.command);
        return serialized;
      },
      // Headers are logged (content type, user agent, lengths help when a sender misbehaves); the
      // signature and credential headers among them are redacted below.
      req: (req: { method: string; url: string; headers: Record<string, unknown>; ip?: string }) => ({
        method: req.method,
        url: withoutTokens(req.url),
        headers: req.headers,
        remoteAddress: req.ip,
      }),
      redisUrl: withoutPassword,
      // A relay route is logged by its name, format and types: its URL may carry a signature (Power Automate's),
      // its headers credentials, its secret is a secret.
      route: routeForLog,
      relays: (routes: unknown) => (Array.isArray(routes) ? routes.map(routeForLog) : routes),
    },
    redact: {
      paths: [...headers.map((name) => `req.headers["${name}"]`), ...SECRET_FIELDS.flatMap((field) => [field, `*.${field}`])],
      censor: '[redacted]',
    },
  };
}

/**
 * A log line for a person: the component (unless the message starts with it: `mirror: table copied`, not
 * `mirror: mirror: table copied`), the message, then the event's type, service and id.
 */
export function personLine(log: Record<string, unknown>, messageKey: string): string {
  const text = (value: unknown): string => (typeof value === 'string' || typeof value === 'number' ? String(value) : '');
  const component = text(log.component);
  const message = text(log[messageKey]);
  const said = component === '' || message.startsWith(`${component}:`) || message.startsWith(`${component} `);
  return [said ? message : `${component}: ${message}`, text(log.type), text(log.service), text(log.eventId)]
    .filter((part) => part !== '')
    .join(' ');
}

/**
 * Where log lines go: JSON lines written asynchronously to `fd`, or, for a person, pino-pretty's lines: the
 * time, the level, the component, the message with the event's type, service and id, then any other
 * fields on the same line (coloured when `fd` is a terminal).
 */
export function createLogStream(format: LogFormat, fd: 1 | 2): DestinationStream {
  if (format === 'json') return pino.destination({ fd, sync: false });
  return loadPinoPretty()({
    destination: fd,
    // Written at once, so that the lines keep their order with what the command prints itself.
    sync: true,
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'pid,hostname,component,reqId,type,service,eventId',
    messageFormat: personLine,
    singleLine: true,
  });
}

/** A pino logger with geohook's options, writing `format` lines to `fd`. */
export function createLogger(settings: LoggerSettings & { format: LogFormat; fd: 1 | 2 }): Logger {
  return pino(createLoggerOptions(settings), createLogStream(settings.format, settings.fd));
}

/** Fastify's request log lines at `debug` instead of `info`; a request that errors is still logged as an error. */
class DebugRequestLogs extends fastify.LogController {
  override incomingRequest(request: FastifyRequest): void {
    if (!this.isLogDisabled(request)) request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error !== null && error !== undefined) super.requestCompleted(error, request, reply);
    else if (!this.isLogDisabled(request)) reply.log.debug({ res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}

/** The `logController` of a Fastify instance whose request logs ("incoming request", "request completed") are at `level`. */
export function requestLogController(level: 'info' | 'debug'): LogController {
  return level === 'debug' ? new DebugRequestLogs() : new fastify.LogController();
}
