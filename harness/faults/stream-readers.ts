import { connect as amqpConnect } from 'amqplib';
import { connect as natsConnect } from 'nats';

/** What a consumer of the broker read: each message's event id and body, in the order the broker handed them. */
export interface ReadMessage {
  id: string;
  body: { after?: { attributes?: Record<string, unknown> } | null };
}

/** A broker's consumer with its official client (no geohook code): how many messages it holds, and all of them. */
export interface StreamReader {
  stored(): Promise<number>;
  readAll(): Promise<ReadMessage[]>;
  close(): Promise<void>;
}

/** Reads the JetStream stream `stream` with the official `nats` client: an ordered consumer from its first message. */
export async function natsReader(url: string, stream: string): Promise<StreamReader> {
  const connection = await natsConnect({ servers: url, maxReconnectAttempts: -1, reconnectTimeWait: 200 });
  const stored = async (): Promise<number> => {
    const manager = await connection.jetstreamManager();
    return (await manager.streams.info(stream)).state.messages;
  };
  return {
    stored: () => stored().catch(() => 0),
    async readAll() {
      const total = await stored();
      const consumer = await connection.jetstream().consumers.get(stream);
      const messages: ReadMessage[] = [];
      for await (const message of await consumer.consume()) {
        messages.push({ id: message.headers?.get('Nats-Msg-Id') ?? '', body: message.json() });
        if (messages.length >= total) break;
      }
      return messages;
    },
    close: () => connection.close(),
  };
}

/**
 * Reads the queue `queue` (a quorum queue unless `type` says otherwise; bound to `exchange` for every key, made here) with the official `amqplib` client:
 * every message as it comes, acknowledged; `stored()` counts the messages read so far.
 */
export async function amqpReader(
  url: string,
  exchange: string,
  queue: string,
  type: 'quorum' | 'classic' = 'quorum',
): Promise<StreamReader> {
  const messages: ReadMessage[] = [];
  let model: Awaited<ReturnType<typeof amqpConnect>> | undefined;
  let closed = false;
  let bound: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (bound = resolve));
  const consume = async (): Promise<void> => {
    while (!closed) {
      try {
        model = await amqpConnect(url);
        const connection = model;
        connection.on('error', () => undefined);
        const channel = await connection.createChannel();
        channel.on('error', () => undefined);
        // A queue not yet ready after a restart closes the channel: it ends this connection, and the loop connects again.
        const ended = new Promise((resolve) => {
          connection.once('close', resolve);
          channel.once('close', resolve);
        });
        await channel.assertExchange(exchange, 'topic', { durable: true });
        await channel.assertQueue(queue, { durable: true, arguments: { 'x-queue-type': type } });
        await channel.bindQueue(queue, exchange, '#');
        await channel.prefetch(1000);
        await channel.consume(queue, (message) => {
          if (message === null) return;
          messages.push({ id: String(message.properties.messageId), body: JSON.parse(message.content.toString('utf8')) });
          channel.ack(message);
        });
        bound();
        await ended;
        await connection.close().catch(() => undefined);
      } catch {
        // The broker is away (restarted by the fault): connect again.
        await model?.close().catch(() => undefined);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  };
  const consuming = consume();
  // The queue exists before the route publishes (an event no queue is bound to take is refused).
  await ready;
  return {
    stored: () => Promise.resolve(new Set(messages.map((message) => message.id)).size),
    readAll: () => Promise.resolve([...messages]),
    async close() {
      closed = true;
      await model?.close().catch(() => undefined);
      await consuming;
    },
  };
}
