import { changeEventsQueueName } from '../changes/change-event.js';
import { ConfigError } from '../errors.js';
import { queueNames, type QueueName } from '../queue/names.js';

/** A queue consumers read: an event family's, or the change events'. */
export type ConsumedQueue = QueueName | typeof changeEventsQueueName;

/** A compiled handler pattern: `gp.job.succeeded`, `feature.*`, `gp.*`, `unknown`, `*`. */
export interface EventPattern {
  readonly pattern: string;
  /** True when an event type matches the pattern. */
  matches(type: string): boolean;
  /** The queues whose events the pattern can match. */
  readonly queues: readonly ConsumedQueue[];
}

const PATTERN = /^[A-Za-z0-9_.*]{1,128}$/;

function queuesOf(pattern: string): readonly ConsumedQueue[] {
  if (pattern.startsWith('gp.')) return [queueNames.gp];
  if (pattern.startsWith('feature.')) return [queueNames.feature];
  if (pattern.startsWith('change.')) return [changeEventsQueueName];
  if (pattern === 'unknown') return [queueNames.unknown];
  // Every delivery; change events are asked for by name (`change.*`).
  if (pattern === '*') return Object.values(queueNames);
  throw new ConfigError(
    `handler "${pattern}": a pattern is "*", "unknown", or starts with "gp.", "feature." or "change." (e.g. "gp.job.succeeded", "feature.*", "change.*")`,
  );
}

/** The type only a pattern naming it takes: `change.*` keeps meaning one event per feature. */
const BY_NAME_ONLY = 'change.submission';

/** Compiles a pattern in which `*` stands for any run of characters (dots included); `change.submission` is taken by name only. */
export function compilePattern(pattern: string): EventPattern {
  if (!PATTERN.test(pattern)) {
    throw new ConfigError(`handler "${pattern}": a pattern has letters, digits, ".", "_" and "*" only`);
  }
  const queues = queuesOf(pattern);
  const regex = new RegExp(`^${pattern.replace(/\./g, '\\.').replace(/\*+/g, '.*')}$`);
  return { pattern, queues, matches: (type) => (type === BY_NAME_ONLY ? pattern === type : regex.test(type)) };
}
