import { setTimeout as sleep } from 'node:timers/promises';
import { SIGNATURE_HEADER, signedDelivery, WEBHOOK_PATH, type SignedDelivery } from './deliveries.js';

/** What became of one delivery: an HTTP status, or the reason there was none. */
export interface DeliveryOutcome {
  eventId: string;
  /** HTTP status of the answer; undefined when the connection failed or timed out. */
  status?: number;
  /** `ECONNREFUSED`, `UND_ERR_SOCKET`, `timeout`…: why there was no answer. */
  error?: string;
  /** The answer's `Retry-After` header, when it had one. */
  retryAfter?: string;
  /** The answer's `id`, when it had one (it must be the event id). */
  answeredId?: string;
  /** When the request was sent, ms since the load started. */
  sentAtMs: number;
  /** When the answer (or the error) came, ms since the load started. */
  answeredAtMs?: number;
}

/** Options of {@link startLoad}. */
export interface LoadOptions {
  /** Base URL of the receiver, e.g. `http://127.0.0.1:8080`. */
  url: string;
  /** Tag making this load's bodies distinct from any other's. */
  tag: string;
  /** Deliveries to send, each once. */
  count: number;
  /** Deliveries started per second at most. */
  ratePerSecond: number;
  /** Requests in flight at most. @defaultValue 32 */
  concurrency?: number;
  /** Longest wait for an answer; past it the delivery counts as not acknowledged. @defaultValue 10000 */
  timeoutMs?: number;
  /** The bytes of delivery `index` of load `tag`. @defaultValue {@link signedDelivery} (a GP job that succeeded) */
  delivery?: (tag: string, index: number) => SignedDelivery;
}

/** A load running in the background. */
export interface Load {
  /** `performance.now()` when the load started: the origin of `sentAtMs` and `answeredAtMs`. */
  readonly startedAtMs: number;
  /** Deliveries started so far. */
  readonly sent: () => number;
  /** Resolves with every delivery's outcome, in order, once all are answered or failed. */
  readonly done: Promise<DeliveryOutcome[]>;
}

/** The short reason of a failed fetch: the socket error's code when there is one. */
function reasonOf(err: unknown): string {
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) return 'timeout';
  const cause = err instanceof Error ? (err.cause as (Error & { code?: string }) | undefined) : undefined;
  return cause?.code ?? cause?.message ?? String(err);
}

/**
 * Sends `count` distinct signed deliveries to `<url>/webhooks/default`, paced at `ratePerSecond`, with at
 * most `concurrency` in flight: each delivery is sent once (no retry), and its answer or connection error
 * recorded. Runs in this process, with Node's fetch.
 */
export function startLoad(options: LoadOptions): Load {
  const { url, tag, count, ratePerSecond, concurrency = 32, timeoutMs = 10_000, delivery = signedDelivery } = options;
  const outcomes = new Array<DeliveryOutcome>(count);
  const startedAtMs = performance.now();
  let next = 0;

  const send = async (index: number): Promise<void> => {
    const { body, signature, eventId } = delivery(tag, index);
    const outcome: DeliveryOutcome = { eventId, sentAtMs: Math.round(performance.now() - startedAtMs) };
    outcomes[index] = outcome;
    try {
      const response = await fetch(`${url}${WEBHOOK_PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signature },
        body,
        signal: AbortSignal.timeout(timeoutMs),
      });
      outcome.status = response.status;
      const retryAfter = response.headers.get('retry-after');
      if (retryAfter !== null) outcome.retryAfter = retryAfter;
      const text = await response.text();
      const answeredId = (JSON.parse(text) as { id?: unknown }).id;
      if (typeof answeredId === 'string') outcome.answeredId = answeredId;
    } catch (err) {
      // A 2xx whose body could not be read still counts as a 2xx: the receiver made the promise.
      if (outcome.status === undefined) outcome.error = reasonOf(err);
    }
    outcome.answeredAtMs = Math.round(performance.now() - startedAtMs);
  };

  const worker = async (): Promise<void> => {
    for (;;) {
      const index = next;
      if (index >= count) return;
      next += 1;
      const dueMs = (index / ratePerSecond) * 1000 - (performance.now() - startedAtMs);
      if (dueMs > 0) await sleep(dueMs);
      await send(index);
    }
  };

  const done = Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker)).then(() => outcomes);
  return { startedAtMs, sent: () => next, done };
}

/** True for an answer that promises the event is stored. */
export function acknowledged(outcome: DeliveryOutcome): boolean {
  return outcome.status !== undefined && outcome.status >= 200 && outcome.status < 300;
}

/** `202×2870, 503×95, ECONNREFUSED×35`: how the deliveries were answered, most frequent first. */
export function describeAnswers(outcomes: readonly DeliveryOutcome[]): string {
  const counts = new Map<string, number>();
  for (const outcome of outcomes) {
    const key = outcome.status === undefined ? (outcome.error ?? 'no answer') : String(outcome.status);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .map(([key, n]) => `${key}×${n}`)
    .join(', ');
}
