import { readFileSync } from 'node:fs';
import type { ConnectionOptions, JetStreamClient, NatsConnection } from 'nats';
import type { Logger } from 'pino';
import { loadNats } from '../commonjs/nats.js';
import type { RelayRouteConfig } from '../config/relay-schema.js';
import { DEFAULT_NATS_STREAM, DEFAULT_NATS_SUBJECT } from '../config/stream-schema.js';
import { messageOf, StreamPublishError } from '../errors.js';
import { renderTemplate } from './stream-message.js';
import { brokerOf, type StreamPublisher } from './stream-publisher.js';

/** @defaultValue of a stream route's publish timeout: the wait for the broker's acknowledgement, ms. */
export const DEFAULT_STREAM_TIMEOUT_MS = 5_000;

/** The duplicate window of a stream geohook creates: JetStream's default, 2 minutes. */
const DUPLICATE_WINDOW_MS = 120_000;

/** The subjects a stream made for `template` captures: `geohook.>` for the default, else each placeholder a `*`. */
export function streamSubjectsOf(template: string): string[] {
  if (template.startsWith('geohook.')) return ['geohook.>'];
  return [template.replace(/[^.]*<[^.]*/g, '*')];
}

/** The nats.js options of a route: its servers, its way of signing in, its TLS files; reconnecting for ever. */
function connectionOptions(route: RelayRouteConfig, timeoutMs: number): ConnectionOptions {
  const { auth, tls } = route;
  const { credsAuthenticator, nkeyAuthenticator } = loadNats();
  const options: ConnectionOptions = {
    servers: route.url.split(',').map((server) => server.trim()),
    name: `geohook relay ${route.name}`,
    timeout: timeoutMs,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    // No stack captured per publish for errors' context (about a sixth of a publish's CPU): StreamPublishError says
    // which broker and why.
    noAsyncTraces: true,
  };
  if (auth?.user !== undefined) Object.assign(options, { user: auth.user, pass: auth.password });
  if (auth?.token !== undefined) options.token = auth.token;
  if (auth?.nkeySeed !== undefined) options.authenticator = nkeyAuthenticator(new TextEncoder().encode(auth.nkeySeed));
  if (auth?.credsFile !== undefined) options.authenticator = credsAuthenticator(readFileSync(auth.credsFile));
  if (tls !== undefined || route.url.startsWith('tls:')) {
    options.tls = {};
    if (tls?.caFile !== undefined) options.tls.caFile = tls.caFile;
    if (tls?.certFile !== undefined) options.tls.certFile = tls.certFile;
    if (tls?.keyFile !== undefined) options.tls.keyFile = tls.keyFile;
  }
  return options;
}

/** Why a JetStream publish failed, as a `StreamPublishError`: only a message past the server's limit is not retried. */
function publishError(err: unknown, broker: string): StreamPublishError {
  const { ErrorCode, NatsError } = loadNats();
  const code = err instanceof NatsError ? err.code : undefined;
  if (code === ErrorCode.MaxPayloadExceeded)
    return new StreamPublishError(`NATS at ${broker} refused the event: larger than its max_payload`, { retryable: false }, { cause: err });
  if (code === ErrorCode.Timeout)
    return new StreamPublishError(`NATS at ${broker}: no JetStream acknowledgement in time`, { timeout: true });
  if (code === ErrorCode.NoResponders)
    return new StreamPublishError(`NATS at ${broker}: no stream captures the subject (or JetStream is not enabled)`, {}, { cause: err });
  return new StreamPublishError(`NATS at ${broker}: ${messageOf(err)}`, {}, { cause: err });
}

/**
 * A route's JetStream publisher (docs/streams.md#nats): the subject from the route's template, `Nats-Msg-Id` the
 * event id (the stream's duplicate window drops a second copy of an event it already holds), geohook's headers,
 * resolved when the stream acknowledged the message. The stream is created when missing (file storage, the
 * subjects of the template, a 2-minute duplicate window); an existing one is used as it is.
 */
export function createNatsPublisher(route: RelayRouteConfig, logger: Logger): StreamPublisher {
  const { connect, headers: natsHeaders, nanos, NatsError } = loadNats();
  const broker = brokerOf(route.url);
  const subject = route.subject ?? DEFAULT_NATS_SUBJECT;
  const stream = route.stream ?? DEFAULT_NATS_STREAM;
  const timeoutMs = route.timeoutMs ?? DEFAULT_STREAM_TIMEOUT_MS;
  const log = logger.child({ component: 'stream', route: route.name, broker });
  let connecting: Promise<{ connection: NatsConnection; js: JetStreamClient }> | undefined;
  let closed = false;

  const open = async (): Promise<{ connection: NatsConnection; js: JetStreamClient }> => {
    const connection = await connect(connectionOptions(route, timeoutMs));
    void (async () => {
      for await (const status of connection.status()) log.debug({ status: status.type }, 'nats connection');
    })().catch(() => undefined);
    void connection.closed().then(() => {
      connecting = undefined;
    });
    try {
      const manager = await connection.jetstreamManager({ timeout: timeoutMs });
      try {
        await manager.streams.info(stream);
      } catch (err) {
        if (!(err instanceof NatsError && err.api_error?.err_code === 10059)) throw err;
        await manager.streams.add({ name: stream, subjects: streamSubjectsOf(subject), duplicate_window: nanos(DUPLICATE_WINDOW_MS) });
        log.info({ stream }, 'nats: stream created');
      }
    } catch (err) {
      await connection.close().catch(() => undefined);
      throw new StreamPublishError(`NATS at ${broker}: stream "${stream}" cannot be used (${messageOf(err)})`, {}, { cause: err });
    }
    log.info({ stream }, 'nats: publishing');
    return { connection, js: connection.jetstream({ timeout: timeoutMs }) };
  };

  const ready = (): Promise<{ connection: NatsConnection; js: JetStreamClient }> => {
    if (connecting === undefined) {
      const attempt = open();
      connecting = attempt;
      attempt.catch(() => {
        if (connecting === attempt) connecting = undefined;
      });
    }
    return connecting;
  };

  return {
    async publish(message) {
      if (closed) throw new StreamPublishError(`NATS at ${broker}: the publisher is closed`);
      let js: JetStreamClient;
      try {
        ({ js } = await ready());
      } catch (err) {
        if (err instanceof StreamPublishError) throw err;
        throw new StreamPublishError(`NATS at ${broker}: cannot connect (${messageOf(err)})`, {}, { cause: err });
      }
      const headers = natsHeaders();
      for (const [name, value] of Object.entries(message.headers)) headers.set(name, value);
      try {
        await js.publish(renderTemplate(subject, message.tokens), message.body, { msgID: message.id, headers, timeout: timeoutMs });
      } catch (err) {
        throw publishError(err, broker);
      }
    },
    async close() {
      closed = true;
      const current = connecting;
      connecting = undefined;
      const opened = await current?.catch(() => undefined);
      await opened?.connection.drain().catch(() => undefined);
    },
  };
}
