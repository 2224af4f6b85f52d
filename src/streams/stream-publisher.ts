import type { StreamMessage } from './stream-message.js';

/**
 * What a stream route publishes through, whatever the broker: an event's message, resolved once the broker has it (JetStream's
 * acknowledgement, RabbitMQ's publisher confirm), rejected with a `StreamPublishError` otherwise; many at once. It connects on
 * first use and again after the broker went away, so a broker that is down at start-up stops nothing else.
 * Kafka would be one more (docs/streams.md#kafka).
 */
export interface StreamPublisher {
  publish(message: StreamMessage): Promise<void>;
  close(): Promise<void>;
}

/** The broker's host and port of a URL, for logs and messages (never its credentials or query). */
export function brokerOf(url: string): string {
  try {
    const parsed = new URL(url.split(',')[0]!.trim());
    return parsed.host;
  } catch {
    return '(an unreadable URL)';
  }
}
