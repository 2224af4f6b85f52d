import { AdminApiError, AdminAuthError, type AdminApiErrorDetails } from '../errors.js';
import { pathOf, redactText, redactValue, urlWithoutToken } from './redact.js';

/** One HTTP answer of the admin API, read to the end. */
export interface AdminAnswer {
  /** HTTP status. */
  status: number;
  statusText: string;
  /** The body as text. */
  body: string;
  /** The URL called. */
  url: string;
  /** A redirect's target, resolved against `url`; redirects are never followed (see `transport.ts`). */
  location?: string;
  /** Strings that must not appear in an error (the token sent, a password). @defaultValue [] */
  secrets?: readonly string[];
  /** How the body's JSON is read (a change file's BigInteger values kept exact). @defaultValue JSON.parse */
  parse?: JsonParser;
  /**
   * Whether an error may repeat what the answer says. False for a URL no configuration trusts (one a server's
   * answer named): the error then gives the HTTP status and the answer's error code only. @defaultValue true
   */
  quote?: boolean;
}

/** Reads JSON text; throws on text that is not JSON. */
export type JsonParser = (text: string) => unknown;

type JsonObject = Record<string, unknown>;

const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

function numberOf(value: unknown): number | undefined {
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof number === 'number' && Number.isFinite(number) ? number : undefined;
}

const strings = (value: unknown): string[] =>
  (Array.isArray(value) ? value : [value]).filter((item): item is string => typeof item === 'string' && item.trim() !== '');

/** The error a body reports, in the admin shape or the portal shape; undefined when it reports none. */
function errorIn(body: unknown): { code: number | undefined; messages: string[] } | undefined {
  if (!isObject(body)) return undefined;
  if (body.status === 'error' || body.status === 'failed' || body.status === 'failure') {
    return { code: numberOf(body.code), messages: [...strings(body.messages), ...strings(body.message)] };
  }
  if (isObject(body.error)) {
    const { code, message, details } = body.error;
    const messages = [...strings(message), ...strings(details)];
    return { code: numberOf(code), messages: [...new Set(messages)] };
  }
  return undefined;
}

function parse(text: string, parser: JsonParser = JSON.parse): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: parser(text) };
  } catch {
    return { ok: false };
  }
}

/** What an error says of an answer it may not repeat. */
const unquoted = (answer: AdminAnswer): string[] => [`HTTP ${answer.status}: the answer of a URL geohook does not trust is not repeated`];

function fail(answer: AdminAnswer, code: number | undefined, messages: string[], response: unknown): never {
  const secrets = answer.secrets ?? [];
  const quote = answer.quote ?? true;
  const clean = (quote ? messages : unquoted(answer)).map((message) => redactText(message, secrets).replace(/\s+/g, ' ').trim());
  const url = urlWithoutToken(answer.url);
  const details: AdminApiErrorDetails = {
    serverCode: code,
    messages: clean,
    url,
    response: quote ? redactValue(response, secrets) : undefined,
  };
  const message = `${pathOf(url)}: ${clean.join(' ') || 'error'}${code === undefined ? '' : ` (code ${code})`}`;
  throw code === 498 || code === 499 ? new AdminAuthError(message, details) : new AdminApiError(message, details);
}

/** The JSON of a successful answer, or the `AdminApiError` an error answer stands for (see {@link checkResponse}). */
function checkAnswer(answer: AdminAnswer): unknown {
  const parsed = parse(answer.body, answer.parse);
  const reported = parsed.ok ? errorIn(parsed.value) : undefined;
  const excerpt = answer.body.length > 500 ? `${answer.body.slice(0, 500)}…` : answer.body;
  if (answer.status >= 300 && answer.status <= 399) {
    const target = answer.location === undefined ? 'no location' : urlWithoutToken(answer.location);
    return fail(answer, answer.status, [`redirected (HTTP ${answer.status}) to ${target}: not followed`], excerpt);
  }
  if (answer.status < 200 || answer.status > 299) {
    const statusLine = `HTTP ${answer.status}${answer.statusText === '' ? '' : ` ${answer.statusText}`}`;
    const messages = reported === undefined || reported.messages.length === 0 ? [statusLine] : reported.messages;
    return fail(answer, reported?.code ?? answer.status, messages, parsed.ok ? parsed.value : excerpt);
  }
  if (!parsed.ok) return fail(answer, undefined, [`the answer is not JSON (HTTP ${answer.status})`], excerpt);
  if (reported !== undefined) return fail(answer, reported.code, reported.messages, parsed.value);
  return parsed.value;
}

/**
 * The one response checker: returns the JSON object of a successful answer, and throws `AdminApiError`
 * (`AdminAuthError` for 498/499) for an error inside an HTTP 200 body in either shape the product uses
 * (`{"status":"error","messages":[…],"code":N}` or `{"error":{"code","message","details"}}`), a non-2xx
 * status (a redirect is named with its location, and not followed), or a body that is not a JSON object. No
 * secret of `answer.secrets` reaches the error.
 */
export function checkResponse(answer: AdminAnswer): JsonObject {
  const value = checkAnswer(answer);
  if (!isObject(value)) return fail(answer, undefined, ['the answer is not a JSON object'], value);
  return value;
}

/** Throws the error of an answer that is not a success (an error status, a redirect not followed); see {@link checkResponse}. */
export function throwAnswerError(answer: AdminAnswer): never {
  checkAnswer(answer);
  return fail(answer, answer.status, [`HTTP ${answer.status} where an error was expected`], undefined);
}

/** {@link checkResponse} for the operations that answer a bare JSON array (ArcGIS Online's webhook list). */
export function checkListResponse(answer: AdminAnswer): unknown[] {
  const value = checkAnswer(answer);
  if (!Array.isArray(value)) return fail(answer, undefined, ['the answer is not a JSON array'], value);
  return value;
}

/** An answer that succeeded but lacks what the operation returns (`the answer has no <what>`). */
export function unexpected(url: string, what: string, body: JsonObject): AdminApiError {
  const message = `the answer has no ${what}`;
  const clean = urlWithoutToken(url);
  return new AdminApiError(`${pathOf(clean)}: ${message}`, { serverCode: undefined, messages: [message], url: clean, response: body });
}
