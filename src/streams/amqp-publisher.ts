import { readFileSync } from 'node:fs';
import type { ChannelModel, ConfirmChannel, connect, Options } from 'amqplib';
import type { Logger } from 'pino';
import { loadAmqplib } from '../commonjs/amqplib.js';
import type { RelayRouteConfig } from '../config/relay-schema.js';
import { DEFAULT_AMQP_EXCHANGE, DEFAULT_AMQP_ROUTING_KEY } from '../config/stream-schema.js';
import { messageOf, StreamPublishError } from '../errors.js';
import { DEFAULT_STREAM_TIMEOUT_MS } from './nats-publisher.js';
import { renderTemplate } from './stream-message.js';
import { brokerOf, type StreamPublisher } from './stream-publisher.js';

/** amqplib's socket options of a route: its credentials and TLS files, a connection name the management UI shows. */
function socketOptions(route: RelayRouteConfig, timeoutMs: number): Parameters<typeof connect>[1] {
  const { auth, tls } = route;
  const { credentials } = loadAmqplib();
  const options: NonNullable<Parameters<typeof connect>[1]> = {
    timeout: timeoutMs,
    clientProperties: { connection_name: `geohook relay ${route.name}` },
  };
  if (auth?.user !== undefined && auth.password !== undefined) options.credentials = credentials.plain(auth.user, auth.password);
  if (tls?.caFile !== undefined) options.ca = [readFileSync(tls.caFile)];
  if (tls?.certFile !== undefined && tls.keyFile !== undefined) {
    options.cert = readFileSync(tls.certFile);
    options.key = readFileSync(tls.keyFile);
    if (auth === undefined) options.credentials = credentials.external();
  }
  return options;
}

/** A pending publish's outcome, settled by the broker's confirm or by the channel's end. */
interface Pending {
  returned: boolean;
}

/**
 * A route's RabbitMQ publisher (docs/streams.md#amqp): a confirm channel on a durable topic exchange (declared when
 * missing), the routing key from the route's template, persistent messages with `messageId` the event id, `type` its
 * type and geohook's headers, resolved on the broker's confirm. Published `mandatory`: an event no queue is bound to
 * take comes back, and counts as not taken (it would be lost), so bind a queue (classic, quorum or stream) first.
 */
export function createAmqpPublisher(route: RelayRouteConfig, logger: Logger): StreamPublisher {
  const broker = brokerOf(route.url);
  const exchange = route.exchange ?? DEFAULT_AMQP_EXCHANGE;
  const routingKey = route.routingKey ?? DEFAULT_AMQP_ROUTING_KEY;
  const timeoutMs = route.timeoutMs ?? DEFAULT_STREAM_TIMEOUT_MS;
  const log = logger.child({ component: 'stream', route: route.name, broker });
  const pending = new Map<string, Pending>();
  let opening: Promise<{ model: ChannelModel; channel: ConfirmChannel }> | undefined;
  let closed = false;

  /** Connects; `forget` is called when the connection or channel ends (the next publish opens anew). */
  const open = async (forget: () => void): Promise<{ model: ChannelModel; channel: ConfirmChannel }> => {
    const model = await loadAmqplib().connect(route.url, socketOptions(route, timeoutMs));
    model.on('error', (err: Error) => log.debug({ err }, 'amqp connection error'));
    model.on('close', forget);
    model.on('blocked', (reason: string) => log.warn({ reason }, 'amqp: the broker blocks publishing (a resource alarm)'));
    try {
      const channel = await model.createConfirmChannel();
      channel.on('error', (err: Error) => log.debug({ err }, 'amqp channel error'));
      // A channel the broker closed alone (a channel error: an exchange deleted, say) ends its connection too: the next
      // publish opens both anew, and no connection is left open without a channel.
      channel.on('close', () => {
        forget();
        void model.close().catch(() => undefined);
      });
      channel.on('return', (message: { properties: { messageId?: string } }) => {
        const entry = message.properties.messageId === undefined ? undefined : pending.get(message.properties.messageId);
        if (entry !== undefined) entry.returned = true;
      });
      await channel.assertExchange(exchange, 'topic', { durable: true });
      log.info({ exchange }, 'amqp: publishing');
      return { model, channel };
    } catch (err) {
      await model.close().catch(() => undefined);
      throw new StreamPublishError(`RabbitMQ at ${broker}: exchange "${exchange}" cannot be used (${messageOf(err)})`, {}, { cause: err });
    }
  };
  const ready = (): Promise<{ model: ChannelModel; channel: ConfirmChannel }> => {
    if (opening === undefined) {
      const forget = (): void => {
        if (opening === attempt) opening = undefined;
      };
      const attempt = open(forget);
      opening = attempt;
      attempt.catch(forget);
    }
    return opening;
  };

  const confirm = (channel: ConfirmChannel, key: string, body: Buffer, properties: Options.Publish): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new StreamPublishError(`RabbitMQ at ${broker}: no confirm in time`, { timeout: true })),
        timeoutMs,
      );
      try {
        channel.publish(exchange, key, body, properties, (err: unknown) => {
          clearTimeout(timer);
          if (err === null || err === undefined) resolve();
          else reject(new StreamPublishError(`RabbitMQ at ${broker} did not take the event (${messageOf(err)})`, {}, { cause: err }));
        });
      } catch (err) {
        clearTimeout(timer);
        reject(new StreamPublishError(`RabbitMQ at ${broker}: ${messageOf(err)}`, {}, { cause: err }));
      }
    });

  return {
    async publish(message) {
      if (closed) throw new StreamPublishError(`RabbitMQ at ${broker}: the publisher is closed`);
      let channel: ConfirmChannel;
      try {
        ({ channel } = await ready());
      } catch (err) {
        if (err instanceof StreamPublishError) throw err;
        throw new StreamPublishError(`RabbitMQ at ${broker}: cannot connect (${messageOf(err)})`, {}, { cause: err });
      }
      const key = renderTemplate(routingKey, message.tokens);
      const entry: Pending = { returned: false };
      pending.set(message.id, entry);
      try {
        await confirm(channel, key, message.body, {
          persistent: true,
          mandatory: true,
          messageId: message.id,
          type: message.type,
          contentType: 'application/json',
          timestamp: Math.floor(Date.now() / 1000),
          appId: 'geohook',
          headers: message.headers,
        });
      } finally {
        pending.delete(message.id);
      }
      if (entry.returned)
        throw new StreamPublishError(`RabbitMQ at ${broker}: no queue is bound to exchange "${exchange}" for routing key "${key}"`);
    },
    async close() {
      closed = true;
      const was = opening;
      opening = undefined;
      const opened = await was?.catch(() => undefined);
      await opened?.channel.close().catch(() => undefined);
      await opened?.model.close().catch(() => undefined);
    },
  };
}
