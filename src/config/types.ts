import type { ClusterOptions, RedisOptions } from 'ioredis';
import type { AdminAuth } from '../arcgis/admin-auth.js';
import type { Envelope } from '../arcgis/geometry.js';
import type { ServicePlacementPolicy } from '../arcgis/placement-policy.js';
import type { WebhookSettings } from '../arcgis/webhook-settings.js';
import type { MirrorConfig } from './mirror-schema.js';
import type { RelayRouteConfig } from './relay-schema.js';
import type { RetryPolicy } from './retry-policy.js';
import type { RouteEmit, RouteWhen } from './route-filter.js';
import type { BacklogLimits, SubscriptionConfig } from './subscription-schema.js';

/** An envelope, in 4326 (the default) or Web Mercator (`{ "wkid": 3857 }` or 102100). */
export interface WithinEnvelope extends Envelope {
  spatialReference?: { wkid: number } | undefined;
}

/** A service's filters (the `changes` section of GEOHOOK_CONFIG, docs/changes.md#filters). */
export interface ChangeFilters {
  /** A clause for every followed layer that has the fields it names, or clauses by layer id. */
  where?: string | Readonly<Record<string, string>> | undefined;
  /** Only features whose geometry meets this envelope (tables are not filtered by it). */
  within?: WithinEnvelope | undefined;
}

/** A service's settings in the `changes` section of GEOHOOK_CONFIG (docs/configuration.md#changes). */
export interface ChangesServiceSettings extends ChangeFilters {
  /** Only updates of this field, from and to these values (docs/changes.md#transitions). */
  readonly when?: RouteWhen | undefined;
  /** Adds `change.entered` (into `where`), `change.left` (out of it), or both, as a relay route's `emit`. */
  readonly emit?: RouteEmit | undefined;
  readonly track?: '*' | readonly string[] | undefined;
  readonly layers?: readonly number[] | undefined;
  /** `initial`: the layers are read once (`change.read` events) when geohook first follows the service. */
  readonly snapshot?: 'initial' | undefined;
  /**
   * `metadata`: a create or update of a feature whose attachments changed in its range carries them; `link`: each
   * with a signed geohook URL of its bytes too. @defaultValue 'none'
   */
  readonly attachments?: 'none' | 'metadata' | 'link' | undefined;
  /** How long a submission stays open after its last part, ms; 0: no `change.submission`. @defaultValue 3000 */
  readonly submissionWindowMs?: number | undefined;
}

/** A hook the receiver accepts deliveries for. */
export interface HookConfig {
  /** Path segment of `POST /webhooks/:hook`. */
  readonly name: string;
  /** Signature keys; any one verifies. The first answers `crc_token` challenges. */
  readonly secrets: readonly string[];
  /** Whether `GET /webhooks/<hook>?crc_token=T` challenges are answered (when the hook has a key). @defaultValue true */
  readonly crc: boolean;
  /** URLs, besides ADMIN_URL's site and TRUSTED_ORIGINS, whose services its deliveries may be read at. */
  readonly trustedOrigins: readonly string[];
  /** Services of the hook (`folder/name.Type`), from the file; self-registration registers the `default` hook only, on REGISTER. */
  readonly services: readonly string[];
  /** Feature-service triggers of the hook, from the file; self-registration uses CHANGE_TYPES. */
  readonly changeTypes: readonly string[];
}

/** Where the admin API is and how to reach it; `undefined` when ADMIN_URL is unset. */
export interface AdminConfig {
  readonly url: string;
  readonly auth: AdminAuth | undefined;
  /** The portal that checks Survey123 webhooks' tokens (PORTAL_URL, else TOKEN_URL's portal, else an Online origin); none: they are refused. */
  readonly portalUrl: string | undefined;
  /** Services to register the `default` hook on, and patterns of them (REGISTER, then `register` of GEOHOOK_CONFIG). */
  readonly register: readonly string[];
  /** Feature services polled for edits (POLL), webhook or not. */
  readonly poll: readonly string[];
  /** Seconds between two polls (POLL_INTERVAL_SECONDS). */
  readonly pollIntervalSeconds: number;
  /** Feature services whose edits become change events (CHANGES), and the fields whose previous values they carry (CHANGES_TRACK). */
  readonly changes: {
    readonly services: readonly string[];
    readonly track: '*' | readonly string[];
    /** The `changes` section of GEOHOOK_CONFIG: per service, its tracked fields, its layers and its filters. */
    readonly byService: Readonly<Record<string, ChangesServiceSettings>>;
  };
  /** Feature-service triggers for registration (CHANGE_TYPES). */
  readonly changeTypes: readonly string[];
  /** Organisation webhook settings applied at the start of registration (`settings` in GEOHOOK_CONFIG). */
  readonly settings: Readonly<Partial<WebhookSettings>> | undefined;
  /** Placement policies applied at the start of registration, by service (`placement` in GEOHOOK_CONFIG). */
  readonly placement: Readonly<Record<string, ServicePlacementPolicy>>;
}

/** geohook's validated, frozen configuration. Nothing else reads `process.env`. */
export interface GeohookConfig {
  readonly port: number;
  readonly host: string;
  /** `undefined` means: start an embedded redis-server (`geohook up`). */
  readonly redisUrl: string | undefined;
  /** Redis beyond REDIS_URL: connection options, Sentinel, Cluster (`redis` in GEOHOOK_CONFIG). */
  readonly redis: RedisSettings;
  /** BullMQ key prefix; `{geohook}` by default with a Redis Cluster, where it must hold a hash tag. */
  readonly prefix: string;
  readonly requireSignature: boolean;
  /** Lower-cased header names, in order of preference. */
  readonly signatureHeaders: readonly string[];
  readonly maxBodyBytes: number;
  readonly publicUrl: string;
  readonly logLevel: string;
  /** LOG_FORMAT; `undefined`: each command's default (`pretty` for `geohook up` in a terminal, else `json`). */
  readonly logFormat: 'json' | 'pretty' | undefined;
  /** `fast`: acknowledged once Redis holds the event; `strict`: once it is on disk (DURABILITY). */
  readonly durability: 'fast' | 'strict';
  /** Where events wait while Redis cannot take them (SPOOL_DIR); `undefined`: such deliveries get 503. */
  readonly spoolDir: string | undefined;
  readonly hooks: ReadonlyMap<string, HookConfig>;
  /** URLs besides ADMIN_URL's site whose feature services geohook may read, and send its token to (TRUSTED_ORIGINS). */
  readonly trustedOrigins: readonly string[];
  readonly dedupRetentionSeconds: number;
  readonly enqueueTimeoutMs: number;
  /** When the receiver cuts slow and idle clients off (`timeouts` in GEOHOOK_CONFIG). */
  readonly timeouts: ReceiverTimeouts;
  /** Connections the receiver holds open at once (`maxConnections` in GEOHOOK_CONFIG). @defaultValue 4096 */
  readonly maxConnections: number;
  /** Seconds between two reloads of the generated keys from Redis (`keyReloadSeconds`). */
  readonly keyReloadSeconds: number;
  /** Completed jobs kept for inspection and replay (the dedup window does not depend on them). */
  readonly completedJobs: { readonly ageSeconds: number; readonly count: number };
  readonly admin: AdminConfig | undefined;
  /** How gaps are filled: how many at once (BACKFILL_CONCURRENCY), and the longest fill of one (BACKFILL_TIMEOUT_SECONDS). */
  readonly backfill: { readonly concurrency: number; readonly timeoutSeconds: number };
  /** Where alerts about the registered webhooks are POSTed (ALERT_URL); `undefined`: none are sent. */
  readonly alertUrl: string | undefined;
  /** Shortest time between two alerts of one kind about one service (ALERT_DEBOUNCE_SECONDS). */
  readonly alertDebounceSeconds: number;
  /** Self-registration timing (`registration` in GEOHOOK_CONFIG). */
  readonly registration: RegistrationTiming;
  /** Port of the emulator `geohook up` starts when ADMIN_URL is unset. */
  readonly emulatorPort: number;
  /** How consumers retry failed events (`retry` in GEOHOOK_CONFIG). */
  readonly retry: RetryPolicy;
  /** The queue dashboard at `/ui`; `undefined` (the default) means there is none. */
  readonly dashboard: DashboardConfig | undefined;
  /** The bearer token `GET /metrics` requires (METRICS_TOKEN); `undefined` (the default): `/metrics` is open. */
  readonly metricsToken: string | undefined;
  /** Relay routes (`relays` in GEOHOOK_CONFIG); none by default. */
  readonly relays: readonly RelayRouteConfig[];
  /** Subscriptions (`subscriptions` in GEOHOOK_CONFIG); those made at run time are in Redis. */
  readonly subscriptions: readonly SubscriptionConfig[];
  /** The backlog caps of subscriptions that set none (`subscriptionBacklog`). */
  readonly subscriptionBacklog: BacklogLimits;
  /** Attachment links (`attachmentLinks`): the base URL they start with (PUBLIC_URL unless set) and how long they open. */
  readonly attachmentLinks: { readonly baseUrl: string; readonly lifetimeSeconds: number };
  /**
   * The event log the fan-out reads (`eventLog`): how long it keeps what every destination has, and how far behind the
   * acknowledgements (seconds) the fan-out may fall while it yields to them.
   */
  readonly eventLog: { readonly retentionSeconds: number; readonly maxLagSeconds: number };
  /** The PostGIS mirror (MIRROR, MIRROR_DATABASE_URL, MIRROR_SCHEMA); `undefined` (the default): none. */
  readonly mirror: MirrorConfig | undefined;
}

/** How long the receiver waits for a client, in milliseconds; a client that takes longer is cut off. */
export interface ReceiverTimeouts {
  /**
   * To receive a request's headers: the first request's counted from the connection, a later one's from its first byte.
   * @defaultValue 10000
   */
  readonly headersMs: number;
  /** To receive a whole request, headers and body; at least `headersMs`. @defaultValue 30000 */
  readonly requestMs: number;
  /** Of silence on a socket while a request is under way. @defaultValue 60000 */
  readonly socketIdleMs: number;
  /** Idle between two requests of a keep-alive connection. @defaultValue 72000 */
  readonly keepAliveMs: number;
}

/** Who may open the dashboard: a bearer token, or a user name and password (HTTP basic auth). */
export type DashboardAuth = { readonly token: string } | { readonly username: string; readonly password: string };

/**
 * What the dashboard may change in the queues: `none`, nothing (Bull Board's read-only mode); `jobs`, retry,
 * remove and promote jobs, one or all of a state; `all`, everything Bull Board offers, adding jobs, editing
 * their data, pausing, emptying and obliterating queues included.
 */
export type DashboardChanges = 'none' | 'jobs' | 'all';

/** The queue dashboard at `/ui`. */
export interface DashboardConfig {
  readonly auth: DashboardAuth;
  /** What it may change (`dashboard.changes` in GEOHOOK_CONFIG). @defaultValue 'jobs' */
  readonly changes: DashboardChanges;
}

/** How often self-registration heals, how many services it checks at once, and how it backs off after a failure. */
export interface RegistrationTiming {
  /** Seconds from the start of a pass to the start of the next. @defaultValue 300 */
  readonly intervalSeconds: number;
  /** Services a pass checks at once. @defaultValue 16 */
  readonly concurrency: number;
  /** First wait after a failure, doubled each time. @defaultValue 1 */
  readonly retryInitialSeconds: number;
  /** Longest wait after a failure. @defaultValue 60 */
  readonly retryMaxSeconds: number;
}

/** The `redis` section of GEOHOOK_CONFIG. */
export interface RedisSettings {
  /** ioredis options of every connection: credentials, TLS, and `sentinels` + `name` for Sentinel. */
  readonly options: Readonly<RedisOptions>;
  /** Set for a Redis Cluster: seed nodes (REDIS_URL when none) and ioredis cluster options. */
  readonly cluster:
    { readonly nodes: readonly { readonly host: string; readonly port: number }[]; readonly options: Readonly<ClusterOptions> } | undefined;
}

/** What an emulator user may do: administrators manage webhooks and placement; organisation administrators also settings. */
export type EmulatorRole = 'administrator' | 'orgadmin' | 'none';

/** A user of the emulator (EMULATOR_USERS). */
export interface EmulatorUser {
  readonly username: string;
  readonly password: string;
  readonly role: EmulatorRole;
}

/** The configuration of `geohook emulator`. */
export interface EmulatorConfig {
  readonly port: number;
  /** `undefined`: the built-in users. */
  readonly users: readonly EmulatorUser[] | undefined;
  /** EMULATOR_TOKEN_SECONDS: the lifetime of every token issued; `undefined`: as `generateToken` asks. */
  readonly tokenSeconds: number | undefined;
}
