import { z } from 'zod';
import { parseSharedSecret, parseWebhookSecret, SHARED_SECRET_HEADER } from './relay-secrets.js';
import { MAX_TRANSFORM_CHARS, transformSyntaxError } from './relay-transform.js';
import type { RetryPolicy } from './retry-policy.js';
import { filterIssues, routeFilterFields, type RouteFilterConfig } from './route-filter.js';
import { checkStreamRoute, isStreamFormat, streamFormats, streamRouteFields, type StreamRouteFields } from './stream-schema.js';

/** The formats a relay route sends events in (docs/relays.md#formats). */
export const relayFormats = ['standard', 'teams', 'slack', 'powerautomate', ...streamFormats] as const;
export type RelayFormat = (typeof relayFormats)[number];

/** Headers a route's `headers` cannot set: the signature's, the body's type, and the Power Automate secret. */
const RESERVED_HEADER = new RegExp(`^(webhook-.*|content-type|content-length|host|${SHARED_SECRET_HEADER})$`, 'i');

/** The content types a route with a transform may send its body under (`application/cloudevents+json`…). */
const JSON_MEDIA_TYPE = /^application\/([a-z0-9.-]+\+)?json(\s*;.*)?$/i;

/** A route name: also its queue's (`relay-<name>`), so letters, digits, `-` and `_`. */
const routeName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, "-" or "_", at most 64 characters');

/** An HTTP route's URL: http(s), without credentials; a stream route's is checked by `checkStreamRoute`. */
function httpUrlIssue(value: string): string | undefined {
  if (!URL.canParse(value)) return 'an http(s) URL';
  const url = new URL(value);
  return /^https?:$/i.test(url.protocol) && url.username === '' && url.password === ''
    ? undefined
    : 'an http(s) URL without credentials (send them with `headers`)';
}

/** The checks of an HTTP route (`standard`, `teams`, `slack`, `powerautomate`): its URL, its secret for its format, its headers. */
function checkHttpRoute(entry: RelayRouteConfig, issue: (message: string, path?: (string | number)[]) => void): void {
  const urlIssue = httpUrlIssue(entry.url);
  if (urlIssue !== undefined) issue(urlIssue, ['url']);
  for (const field of Object.keys(streamRouteFields) as (keyof StreamRouteFields)[])
    if (entry[field] !== undefined) issue(`"${field}" is for nats and amqp routes`, [field]);
  const secrets = entry.secret === undefined ? [] : [entry.secret].flat();
  try {
    if (entry.format === 'standard') {
      if (secrets.length === 0) issue('a standard route needs a "whsec_" secret', ['secret']);
      secrets.forEach((secret, at) => parseWebhookSecret(secret, `secret[${at}]`));
    } else if (entry.format === 'powerautomate') {
      if (secrets.length > 1) issue('a powerautomate route takes one shared secret', ['secret']);
      secrets.forEach((secret) => parseSharedSecret(secret, 'secret'));
    } else if (secrets.length > 0) issue(`a ${entry.format} route is not signed: remove its secret`, ['secret']);
  } catch (err) {
    issue((err as Error).message, ['secret']);
  }
  for (const [header, value] of Object.entries(entry.headers ?? {})) {
    // A transformed body may say what it is (a CloudEvent is application/cloudevents+json): only a JSON type.
    if (header.toLowerCase() === 'content-type' && entry.transform !== undefined) {
      if (!JSON_MEDIA_TYPE.test(value))
        issue(`headers: content-type "${value}" is not a JSON media type (application/json, application/<name>+json)`, ['headers']);
    } else if (RESERVED_HEADER.test(header))
      issue(
        `headers cannot set "${header}": geohook sets it${header.toLowerCase() === 'content-type' ? ' (a route with a transform may)' : ''}`,
        ['headers'],
      );
  }
}

/**
 * The `relays` of GEOHOOK_CONFIG (docs/relays.md): made from the file schema's own `retry` and `where` schemas so
 * that a route's are read as the top-level ones are. Each route is checked whole: its secret fits its format, its
 * headers leave the signature alone, and no two routes share a name. Messages name the route, never a secret.
 */
export function relaysSchema(parts: { retry: z.ZodType<RetryPolicy>; where: z.ZodType<string> }): z.ZodType<RelayRouteConfig[]> {
  const route = z
    .object({
      name: routeName,
      /** The only URL the route calls; redirects are not followed. A `nats` or `amqp` route: its broker. */
      url: z.string().min(1, 'a URL'),
      ...routeFilterFields(parts.where),
      /** @defaultValue 'standard' */
      format: z.enum(relayFormats, { error: relayFormats.join(', ') }).default('standard'),
      /** `standard`: one `whsec_` secret, or several while rotating (the current one first); `powerautomate`: the shared secret. */
      secret: z.union([z.string(), z.array(z.string()).min(1)]).optional(),
      /** Extra headers of every request (e.g. `authorization`). */
      headers: z
        .record(z.string().regex(/^[A-Za-z0-9-]{1,64}$/, 'header names'), z.string().regex(/^[\x20-\x7e]*$/, 'printable ASCII'))
        .optional(),
      /** Longest wait for an answer, ms. @defaultValue 15000 */
      timeoutMs: z.number().int().min(100).max(60_000).optional(),
      /** The schedule of tries, in the shape of the top-level `retry`; the Standard Webhooks schedule otherwise. */
      retry: parts.retry.optional(),
      /** Also relay deliveries no signature verified (accepted with REQUIRE_SIGNATURE=false). @defaultValue false */
      allowUnverified: z.boolean().optional(),
      /** A JSONata expression evaluated on the event: its result (a JSON object) is the body. */
      transform: z.string().trim().min(1, 'a JSONata expression').max(MAX_TRANSFORM_CHARS).optional(),
      ...streamRouteFields,
    })
    .strict();
  return z.array(route).superRefine((routes, context) => {
    const names = new Set<string>();
    routes.forEach((entry, index) => {
      const issue = (message: string, path: (string | number)[] = []) =>
        context.addIssue({ code: 'custom', message: `route "${entry.name}": ${message}`, path: [index, ...path] });
      if (names.has(entry.name)) issue('a second route of this name');
      names.add(entry.name);
      if (isStreamFormat(entry.format)) {
        checkStreamRoute({ ...entry, format: entry.format }, issue);
      } else checkHttpRoute(entry, issue);
      if (entry.transform !== undefined) {
        const syntax = transformSyntaxError(entry.transform);
        if (syntax !== undefined) issue(`transform is not JSONata: ${syntax}`, ['transform']);
      }
      for (const { message, path } of filterIssues(entry)) issue(message, [path]);
    });
  });
}

/** A relay route of GEOHOOK_CONFIG, validated (docs/relays.md#routes). */
export interface RelayRouteConfig extends RouteFilterConfig, StreamRouteFields {
  /** Letters, digits, `-` and `_`: its queue is `relay-<name>`. */
  readonly name: string;
  /** The only URL the route calls; redirects are not followed. A `nats` route: its servers, comma-separated; `amqp`: its broker. */
  readonly url: string;
  /** @defaultValue 'standard' */
  readonly format: RelayFormat;
  /** `standard`: `whsec_` secrets, the current one first; `powerautomate`: the shared secret. */
  readonly secret?: string | readonly string[] | undefined;
  /** Extra headers of every request. */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /** Longest wait for an answer, ms. @defaultValue 15000 */
  readonly timeoutMs?: number | undefined;
  /** Its schedule of tries; the Standard Webhooks schedule (8 tries over about 27.5 h) when absent. */
  readonly retry?: RetryPolicy | undefined;
  /**
   * Also relay webhook deliveries no signature verified (`verified: false`, accepted with REQUIRE_SIGNATURE=false):
   * anyone who reached the receiver may have sent them, and the route would sign them as geohook. Backfilled,
   * polled and change events are geohook's own and always relayed. @defaultValue false
   */
  readonly allowUnverified?: boolean | undefined;
  /**
   * A JSONata expression evaluated on the event (the `data` of the standard body): its result, a JSON object, is the
   * body sent, signed as the format signs (docs/relays.md#transforms), or published (docs/streams.md#transforms). None: the format's own body.
   */
  readonly transform?: string | undefined;
}
