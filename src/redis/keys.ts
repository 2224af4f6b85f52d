/**
 * Every Redis key geohook writes beside BullMQ's own, under the key prefix (`GEOHOOK_PREFIX`): one table of them
 * is in docs/redis.md. BullMQ's queues keep theirs under `<prefix>:<queue>:`.
 */

/**
 * The dedup key of an event on a hook, kept for the dedup window: `digest` is 16 bytes of the SHA-256 of hook and
 * event id (`dedupDigest`), appended by the accept script. An event whose ranges of server generations show a
 * repeat has none (docs/backfill.md).
 */
export const dedupKey = (prefix: string, digest: string): string => `${prefix}:de:${digest}`;

/** The hash of watermarks (highest server generation handed over, by scope). */
export const watermarksKey = (prefix: string): string => `${prefix}:watermarks`;

/**
 * The hash of each scope's server generation as the server itself last reported it (its `changeTrackingInfo`),
 * `<generation>\t<service URL>`: a delivered range ending past it waits for the server to confirm it (docs/backfill.md).
 */
export const serverGensKey = (prefix: string): string => `${prefix}:server-gens`;

/** The hash of the delivered ranges waiting for their server to confirm them, by scope. */
export const aheadKey = (prefix: string): string => `${prefix}:ahead`;

/**
 * The hash of the gaps a late delivery may still fill, by scope: `<from>\t<to>` lines, one per gap job (at most
 * 100 per scope); a line whose job a worker took is dropped when it is next read.
 */
export const gapsKey = (prefix: string): string => `${prefix}:gaps`;

/**
 * The hash of what last happened to each service (docs/backfill.md#the-services-view): field
 * `<activity>\t<folder>/<name>.<Type>`, value the epoch ms it last happened.
 */
export const activityKey = (prefix: string): string => `${prefix}:activity`;

/** The hash of the registered webhooks' state, by service (docs/backfill.md#upstream-health). */
export const upstreamKey = (prefix: string): string => `${prefix}:upstream`;

/** The sorted set of a registered webhook's failed deliveries as the server reported them (score: epoch ms). */
export const upstreamFailuresKey = (prefix: string, service: string): string => `${prefix}:upstream:failures:${service}`;

/** The hash of when each hook last received ArcGIS Online's test ping: hook name → epoch ms. */
export const pingsKey = (prefix: string): string => `${prefix}:pings`;

/** The list of the signature keys generated for `hook`, the current key first. */
export const generatedKeysKey = (prefix: string, hook: string): string => `${prefix}:hooks:${hook}:keys`;

/** The lock one replica holds while it registers or rotates the webhook of `hook` on `service`. */
export const registrationLockKey = (prefix: string, hook: string, service: string): string =>
  `${prefix}:registration:${hook}:${service}:lock`;

/** The hash of the services self-registration could not register for `hook`: service → why, since when, next retry (JSON). */
export const registrationFailingKey = (prefix: string, hook: string): string => `${prefix}:registration:${hook}:failing`;

/** Set for the debounce window after an alert of `event` on `service` was sent, so that several receivers send one. */
export const alertDebounceKey = (prefix: string, event: string, service: string): string => `${prefix}:alerts:${event}:${service}`;

/** Change events (docs/changes.md): the generation each scope is resolved to. */
export const changesResolvedKey = (prefix: string): string => `${prefix}:changes:resolved`;

/** Change events: the range each scope is resolving (`from\tto\tclaimed at\torigin`), one at a time. */
export const changesPendingKey = (prefix: string): string => `${prefix}:changes:pending`;

/**
 * Change events: how each scope's generations reached geohook, `to\torigin` lines in order (`webhook`, `backfill`,
 * `poll`), written as its watermark moves and dropped once claimed.
 */
export const changesOriginsKey = (prefix: string): string => `${prefix}:changes:origins`;

/** Change events: the last range of each scope that failed for good, as JSON. */
export const changesFailedKey = (prefix: string): string => `${prefix}:changes:failed`;

/** Change events: the previous values of a layer's features (`<scope>#<layer id>`, or an ArcGIS Online layer scope). */
export const changesPreviousKey = (prefix: string, layerScope: string): string => `${prefix}:changes:prev:${layerScope}`;

/** Change events: the parent of each attachment of a layer seen added or updated (attachment GlobalID → `<parent GlobalID>\t<attachment id>`), as deletes name attachments by GlobalID only. */
export const changesAttachmentParentsKey = (prefix: string, layerScope: string): string => `${prefix}:changes:attachments:${layerScope}`;

/** Change events: the field names of each layer as last resolved (`<scope>#<layer id>`, or an Online layer scope → JSON). */
export const changesSchemasKey = (prefix: string): string => `${prefix}:changes:schemas`;

/** Initial snapshots, by scope: the generation the first one named (`<gen>`), then `done:<gen>` once it was written. */
export const changesSnapshotsKey = (prefix: string): string => `${prefix}:changes:snapshots`;

/** Submissions (docs/submissions.md): the parts of one submission (`parent`, `r:<layer>:<key>`, `a:<layer>:<id>`), by its id. */
export const submissionPartsKey = (prefix: string, submission: string): string => `${prefix}:submissions:parts:${submission}`;

/** Submissions: each submission with a parent and another part (or a Survey123 webhook), scored by when it closes. */
export const submissionsDueKey = (prefix: string): string => `${prefix}:submissions:due`;

/**
 * Submissions: the submissions held until the resolver catches up with their gate (docs/submissions.md), each scored
 * by when it closes with what it has even so.
 */
export const submissionsHeldKey = (prefix: string): string => `${prefix}:submissions:held`;

/** Submissions: those held for a scope (claim-submissions.lua builds it), each scored by the generation it waits for. */
export const submissionsHeldInKey = (prefix: string, scope: string): string => `${prefix}:submissions:held:${scope}`;

/** Submissions: the scopes some submission is held for (their held sets are looked at on every claim). */
export const submissionsHoldingKey = (prefix: string): string => `${prefix}:submissions:holding`;

/**
 * Submissions: the parents created in one period of the parts' keeping time (`bucket`, the time divided by it): each
 * parent's submission id → a reference to its row (`<hook>\t<service>\t<layer>\t<object id>\t<GlobalID>\t<ts>`), and
 * `g:<hook>\n<GlobalID>` → its submission id, for the Survey123 webhook; kept two periods.
 */
export const submissionParentsKey = (prefix: string, bucket: number): string => `${prefix}:submissions:parents:${bucket}`;

/** Submissions: there at most an hour after the last Survey123 webhook that came before its parent (parents are looked up only then). */
export const submissionsWaitingKey = (prefix: string): string => `${prefix}:submissions:survey123`;

/** Submissions: a Survey123 webhook for a parent not resolved yet (`<hook>\n<GlobalID>`), kept an hour. */
export const submissionSurvey123Key = (prefix: string, hook: string, globalId: string): string =>
  `${prefix}:submissions:survey123:${hook}:${globalId}`;

/** Relays (docs/relays.md): a route's counts and last error (`delivered`, `failing`, `lastError`, `lastErrorAt`, `lastDeliveredAt`, `alerted`). */
export const relayStatsKey = (prefix: string, route: string): string => `${prefix}:relay:route:${route}`;

/** Stream routes (docs/streams.md#order): the lease of the receiver running a route's lane (the others wait for it to lapse). */
export const streamLaneLeaseKey = (prefix: string, route: string): string => `${prefix}:relay:route:${route}:lane`;

/**
 * Stream routes: set while a receiver holds events of a route's lane read and not yet published (its token, renewed;
 * it lapses after a receiver died): a new holder of the lease reads them again only once it is gone.
 */
export const streamLaneHeldKey = (prefix: string, route: string): string => `${prefix}:relay:route:${route}:held`;

/** Stream routes: the consumer group on the event log through which a route's lane reads it (docs/streams.md#order). */
export const streamLaneGroup = (route: string): string => `lane:${route}`;

/**
 * The event log (docs/subscriptions.md): a stream of every new event, appended by the accept script in the call that
 * stores it (`j` its job id, `d` its data), read by the fan-out, kept for `eventLog.retentionSeconds`.
 */
export const eventLogKey = (prefix: string): string => `${prefix}:log`;

/**
 * The fan-out's state: `cursor` (the last log entry handed to every destination), `version` (raised by every change
 * of the subscriptions), `catchup:<name>` (where a subscription made with `--from` reads the log next).
 */
export const fanoutKey = (prefix: string): string => `${prefix}:fanout`;

/** The lease of the receiver running the fan-out (the others wait for it to lapse). */
export const fanoutLeaseKey = (prefix: string): string => `${prefix}:fanout:lease`;

/** The fields of each layer whose change events were written (`<service>#<layer id>` → JSON), which `where` filters read. */
export const layerFieldsKey = (prefix: string): string => `${prefix}:fanout:layers`;

/** Subscriptions: their definitions, by name (JSON). */
export const subscriptionsKey = (prefix: string): string => `${prefix}:subscriptions`;

/** Subscriptions: the events each one dropped past its backlog cap, by name. */
export const subscriptionDroppedKey = (prefix: string): string => `${prefix}:subscriptions:dropped`;
/** The PostGIS mirror: the last failure of each layer (`<service>#<layer id>` → JSON `{error, at}`), until it catches up. */
export const mirrorErrorsKey = (prefix: string): string => `${prefix}:mirror:errors`;

/** Attachment links: the random key geohook signs them with (base64url), made once by the first process that needs it. */
export const attachmentLinkKey = (prefix: string): string => `${prefix}:attachments:link-key`;

/** Attachment links: when the links of one version of an attachment expire (Unix seconds), by the version's hash, kept until then. */
export const attachmentLinkExpiryKey = (prefix: string, version: string): string => `${prefix}:attachments:link-expiry:${version}`;
