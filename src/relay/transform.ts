import { jsonata } from '../commonjs/jsonata.js';
import { lineAndColumn, transformSyntaxError } from '../config/relay-transform.js';
import { ConfigError, GeohookError } from '../errors.js';
import { directTransformOf, type TransformNode } from './direct-transform.js';
import { escapeMrkdwn } from './formats/slack.js';
import { plainTeamsText } from './formats/teams.js';

/**
 * Most steps (JSONata nodes evaluated) a transform takes on one event: a loop ends with an error after as many steps
 * whatever the machine's load (a 10-field object takes about 30).
 */
export const TRANSFORM_MAX_STEPS = 10_000;
/**
 * Longest a transform runs on one event, ms of the clock, checked at every step: the backstop of steps that are slow
 * on their own. Generous, as a busy machine stretches the clock under an evaluation.
 */
export const TRANSFORM_TIMEOUT_MS = 1000;
/** Deepest a transform's evaluation goes (JSONata's steps within steps, recursion included). */
export const TRANSFORM_MAX_DEPTH = 500;
/** Most items of any sequence a transform makes (`[1..1e7]` would hold 80 MB). */
export const TRANSFORM_MAX_SEQUENCE = 100_000;
/** Largest body a transform may give, in bytes of its JSON. */
export const MAX_TRANSFORM_BODY_BYTES = 1_048_576;

/** What the step counter throws through JSONata (which may set a position on it). */
class TooManySteps {
  position?: number;
}

/** A route's transform failed on an event: the event is a dead letter of the route with this message. */
export class RelayTransformError extends GeohookError {
  constructor(message: string) {
    super('GEOHOOK_ERR_RELAY_TRANSFORM', message);
    this.name = 'RelayTransformError';
  }
}

/** A route's transform, compiled: the body (JSON text) it makes of an event's data. Rejects with a {@link RelayTransformError}. */
export type RelayTransform = (data: unknown, eventId: string) => Promise<string>;

/** What JSONata throws while it evaluates: a plain object with a code, a message and where in the expression. */
interface JsonataError {
  code?: unknown;
  message?: unknown;
  position?: unknown;
}

/** What a value is, in a message: `an array`, `a string`, `nothing`. */
function kindOf(value: unknown): string {
  if (value === undefined) return 'nothing (no part of the expression matched the event)';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'function') return 'a function';
  return `a ${typeof value}`;
}

/**
 * A route's `transform` compiled once (a JSONata expression: a declarative language with no access to anything but
 * the event, docs/relays.md#transforms), bounded in time, depth, sequence length and body size. Besides JSONata's own
 * functions it has `$teamsText(s)` and `$slackText(s)`, which make a value plain text in a Teams card or a Slack
 * message as the built-in formats do. Throws a `GEOHOOK_ERR_CONFIG` error when the expression does not parse (the
 * config check says so first).
 */
export function compileTransform(expression: string, route: string): RelayTransform {
  const syntax = transformSyntaxError(expression);
  if (syntax !== undefined) throw new ConfigError(`relays "${route}": transform is not JSONata: ${syntax}`);
  const compiled = jsonata(expression, { timeout: TRANSFORM_TIMEOUT_MS, stack: TRANSFORM_MAX_DEPTH, sequence: TRANSFORM_MAX_SEQUENCE });
  // Called by JSONata before each step, with the environment of that evaluation (its `base`): the steps are counted there.
  const countStep = (_expr: unknown, _input: unknown, environment: { base: { geohookSteps?: number } }): void => {
    const steps = (environment.base.geohookSteps ?? 0) + 1;
    environment.base.geohookSteps = steps;
    if (steps > TRANSFORM_MAX_STEPS) throw new TooManySteps();
  };
  // JSONata's hook for tools that watch an evaluation (its `assign` is typed for names only).
  compiled.assign(Symbol.for('jsonata.__evaluate_entry') as unknown as string, countStep);
  compiled.registerFunction('teamsText', (text: string | undefined) => (text === undefined ? undefined : plainTeamsText(text)), '<s-:s>');
  compiled.registerFunction('slackText', (text: string | undefined) => (text === undefined ? undefined : escapeMrkdwn(text)), '<s-:s>');
  // An object of paths and literals (most bodies) is built without JSONata's asynchronous evaluation, to the same result.
  const direct = directTransformOf(compiled.ast() as TransformNode, { maxSteps: TRANSFORM_MAX_STEPS, maxDepth: TRANSFORM_MAX_DEPTH });
  return async (data, eventId) => {
    const failed = (why: string) => new RelayTransformError(`route "${route}": the transform failed on event ${eventId}: ${why}`);
    let result: unknown;
    try {
      result = direct?.(data) ?? (await compiled.evaluate(data));
    } catch (err) {
      if (err instanceof TooManySteps) throw failed(`it took more than ${TRANSFORM_MAX_STEPS} steps (a loop?)`);
      const { code, message, position } = (err ?? {}) as JsonataError;
      const text = typeof message === 'string' ? message : String(err);
      const where = typeof position === 'number' && position > 0 ? `, at ${lineAndColumn(expression, position)}` : '';
      throw failed(`it threw: ${text}${typeof code === 'string' ? ` (JSONata ${code}${where})` : ''}`);
    }
    if (typeof result !== 'object' || result === null || Array.isArray(result))
      throw failed(`it gave ${kindOf(result)}, not a JSON object`);
    let body: string;
    try {
      body = JSON.stringify(result);
    } catch (err) {
      throw failed(`it gave a value JSON cannot hold (${(err as Error).message})`);
    }
    const bytes = Buffer.byteLength(body);
    if (bytes > MAX_TRANSFORM_BODY_BYTES) throw failed(`its body is ${bytes} bytes, more than ${MAX_TRANSFORM_BODY_BYTES}`);
    return body;
  };
}
