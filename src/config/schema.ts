import { z } from 'zod';
import { parseWhere } from '../arcgis/where/where-parser.js';
import {
  defaultCompletedJobs,
  DEFAULT_DEDUP_RETENTION_SECONDS,
  DEFAULT_FANOUT_MAX_LAG_SECONDS,
  DEFAULT_PREFIX,
  defaultRetryPolicy,
} from './defaults.js';
import { mirrorEnvShape } from './mirror-schema.js';
import { orgSettingsSchema, placementSchema, registerEntry, serviceName } from './org-schema.js';
import { relaysSchema } from './relay-schema.js';
import { changesFilterIssues, routeFilterFields } from './route-filter.js';
import { DEFAULT_BACKLOG, subscriptionsSchema } from './subscription-schema.js';

const hookName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, "-" or "_", at most 64 characters');

const booleanText = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'], { message: 'true or false' })
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

/** A whole decimal number within bounds; `what` says what is allowed. */
const wholeNumber = (min: number, max: number, what: string) =>
  z.string().regex(/^\d+$/, what).transform(Number).pipe(z.number().min(min, what).max(max, what));

const port = wholeNumber(0, 65535, 'a port number from 0 to 65535');

const commaList = z.string().transform((value) =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0),
);

const httpUrl = z
  .string()
  .url('an http(s) URL')
  .refine((value) => /^https?:\/\//i.test(value), 'an http(s) URL')
  .transform((value) => value.replace(/\/+$/, ''));

/** An http(s) URL with neither credentials, query nor fragment (nor an empty `?` or `#`). */
const isBareHttpUrl = (value: string): boolean => {
  const url = URL.canParse(value) ? new URL(value) : undefined;
  return (
    url !== undefined &&
    /^https?:$/.test(url.protocol) &&
    url.username === '' &&
    url.password === '' &&
    !value.includes('?') &&
    !value.includes('#')
  );
};

/** The base URL of attachment links: a bare http(s) URL, its trailing slashes dropped. */
const linkBaseUrl = z
  .string()
  .refine(isBareHttpUrl, 'an http(s) URL without credentials, query or fragment (https://geohook.example.com)')
  .transform((value) => value.replace(/\/+$/, ''));

/** A URL geohook may send requests and its token to: an origin, or a URL whose path the trusted ones start with. */
const trustedUrl = z
  .string()
  .url('an http(s) origin or URL')
  .refine(isBareHttpUrl, 'an http(s) origin or URL, without credentials, query or fragment');

/**
 * The environment geohook reads (docs/configuration.md). Every value arrives as text; the schema turns it into the
 * typed value or explains, in one line, what the variable allows.
 */
export const envSchema = z.object({
  /** Receiver port. @defaultValue 8080 */
  PORT: port.default(8080),
  /** Receiver listen address. @defaultValue '0.0.0.0' */
  HOST: z.string().min(1, 'a host name or address').default('0.0.0.0'),
  /** Redis for BullMQ; unset, `geohook up` and `geohook serve` start an embedded local redis-server (`buildReceiver` needs one). */
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\/.+/, 'a redis:// or rediss:// URL')
    .optional(),
  /** BullMQ key prefix. @defaultValue 'geohook' */
  GEOHOOK_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_{}.-]{1,64}$/, 'letters, digits, ".", "-", "_" or "{}" (at most 64 characters)')
    .default(DEFAULT_PREFIX),
  /** Comma-separated signature keys of the `default` hook; any one verifies. */
  HOOK_SECRETS: commaList.optional(),
  /** Reject unsigned deliveries. @defaultValue true */
  REQUIRE_SIGNATURE: booleanText.default(true),
  /** Headers that may carry the signature, first present wins. */
  SIGNATURE_HEADER: commaList
    .pipe(z.array(z.string().regex(/^[A-Za-z0-9-]+$/, 'header names')).min(1, 'at least one header name'))
    .default(['x-service', 'x-esriHook-Signature']),
  /** Largest accepted body in bytes. @defaultValue 1048576 */
  MAX_BODY_BYTES: wholeNumber(1024, 104_857_600, 'a whole number of bytes from 1024 to 104857600').default(1_048_576),
  /** Path of a JSON file with hooks and settings too rich for the environment. */
  GEOHOOK_CONFIG: z.string().min(1, 'a file path').optional(),
  /** Base URL the GIS server uses to reach the receiver. @defaultValue `http://127.0.0.1:$PORT` */
  PUBLIC_URL: httpUrl.optional(),
  /** When a delivery is acknowledged: `fast` once Redis holds it, `strict` once it is on disk. @defaultValue 'fast' */
  DURABILITY: z.enum(['fast', 'strict'], { error: 'fast or strict' }).default('fast'),
  /** A local directory where events are spooled (fsync'd) while Redis cannot take them; unset: 503. */
  SPOOL_DIR: z.string().min(1, 'a directory path').optional(),
  /** pino level. @defaultValue 'info' */
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** `json` (one object per line) or `pretty` (a line for a person). @defaultValue `pretty` for `geohook up` in a terminal, else `json` */
  LOG_FORMAT: z.enum(['json', 'pretty'], { error: 'json or pretty' }).optional(),
  /** The admin root, e.g. `https://gis.example.com/arcgis/admin`. */
  ADMIN_URL: httpUrl.optional(),
  /** A static admin token. */
  ADMIN_TOKEN: z.string().min(1, 'a token').optional(),
  /** Admin credentials exchanged for a token at TOKEN_URL. */
  ADMIN_USERNAME: z.string().min(1, 'a user name').optional(),
  ADMIN_PASSWORD: z.string().min(1, 'a password').optional(),
  /** Where tokens come from. @defaultValue `{ADMIN_URL}/generateToken` */
  TOKEN_URL: httpUrl.optional(),
  /**
   * The portal Survey123 users sign in to, whose `community/self` checks the token of a Survey123 webhook
   * (docs/submissions.md). @defaultValue TOKEN_URL's portal, else an ArcGIS Online ADMIN_URL's origin
   */
  PORTAL_URL: httpUrl.optional(),
  /**
   * URLs besides ADMIN_URL's site whose feature services geohook may read (and send its token to): origins or
   * URL prefixes, comma-separated (docs/backfill.md#where-gaps-are-filled).
   */
  TRUSTED_ORIGINS: commaList.pipe(z.array(trustedUrl)).optional(),
  /**
   * Services to register the `default` hook on: `folder/name.Type` or `name.Type`, or patterns of them (`Hosted/*`,
   * `*.FeatureServer`), comma-separated; added to `register` of GEOHOOK_CONFIG.
   */
  REGISTER: commaList.pipe(z.array(registerEntry)).optional(),
  /** Port of the emulator `geohook up` starts when ADMIN_URL is unset. @defaultValue 7080 */
  EMULATOR_PORT: port.default(7080),
  /** Enables the queue dashboard at `/ui`, protected by this bearer token (at least 16 characters). */
  DASHBOARD_TOKEN: z.string().min(16, 'a token of at least 16 characters').optional(),
  /** When set, `GET /metrics` requires `Authorization: Bearer <METRICS_TOKEN>` (at least 16 characters); unset, it is open. */
  METRICS_TOKEN: z.string().min(16, 'a token of at least 16 characters').optional(),
  /** Feature-service triggers for registration. @defaultValue ['*'] */
  CHANGE_TYPES: commaList.pipe(z.array(z.string().min(1)).min(1, 'at least one change type')).default(['*']),
  /** Feature services whose edits geohook polls for, webhook or not (docs/backfill.md#poll-mode). */
  POLL: commaList
    .pipe(z.array(serviceName.refine((name) => name.endsWith('.FeatureServer'), 'feature services: folder/name.FeatureServer')))
    .optional(),
  /** Feature services whose edits become change events, one per changed feature (docs/changes.md). */
  CHANGES: commaList
    .pipe(z.array(serviceName.refine((name) => name.endsWith('.FeatureServer'), 'feature services: folder/name.FeatureServer')))
    .optional(),
  /** Fields whose previous values change events carry: `*` for every field, else names. @defaultValue none */
  CHANGES_TRACK: commaList
    .pipe(z.array(z.string().regex(/^(\*|[A-Za-z_][A-Za-z0-9_]{0,63})$/, 'field names, or * for every field')))
    .optional(),
  /** Seconds between two polls. @defaultValue 30 */
  POLL_INTERVAL_SECONDS: z
    .string()
    .regex(/^\d+(\.\d+)?$/, 'a number of seconds from 0.1 to 86400')
    .transform(Number)
    .pipe(z.number().min(0.1, 'a number of seconds from 0.1 to 86400').max(86_400, 'a number of seconds from 0.1 to 86400'))
    .default(30),
  /** Gaps each receiver fills at once (docs/backfill.md#how-it-works). @defaultValue 16 */
  BACKFILL_CONCURRENCY: wholeNumber(1, 256, 'a whole number from 1 to 256').default(16),
  /** The longest fill of one gap, in seconds, asynchronous `extractChanges` included. @defaultValue 1800 */
  BACKFILL_TIMEOUT_SECONDS: wholeNumber(10, 86_400, 'a whole number of seconds from 10 to 86400').default(1800),
  /** Where alerts about the registered webhooks are POSTed (docs/backfill.md#alerts); unset: none are sent. */
  ALERT_URL: httpUrl.optional(),
  /** Shortest time between two alerts of one kind about one service. @defaultValue 300 */
  ALERT_DEBOUNCE_SECONDS: wholeNumber(0, 86_400, 'a whole number of seconds from 0 to 86400').default(300),
  ...mirrorEnvShape,
});

const emulatorRoles = ['administrator', 'orgadmin', 'none'] as const;
const isEmulatorRole = (role: string | undefined): role is (typeof emulatorRoles)[number] =>
  (emulatorRoles as readonly (string | undefined)[]).includes(role);

/** `user:password:role,…`, each role administrator, orgadmin or none. */
const emulatorUsers = commaList.transform((entries, ctx) =>
  entries.map((entry) => {
    const [username, password, role] = entry.split(':');
    if (username && password && isEmulatorRole(role)) return { username, password, role };
    ctx.addIssue({ code: 'custom', message: `"${entry}" is not user:password:role with role administrator, orgadmin or none` });
    return z.NEVER;
  }),
);

/** The environment `geohook emulator` reads. */
export const emulatorEnvSchema = z.object({
  /** Emulator port. @defaultValue 7080 */
  EMULATOR_PORT: port.default(7080),
  /** The emulator's users, `user:password:role,…`; unset: admin, orgadmin and viewer. */
  EMULATOR_USERS: emulatorUsers.optional(),
  /** Lifetime of the tokens the emulator issues, in seconds, whatever `expiration` asks; unset: as asked. */
  EMULATOR_TOKEN_SECONDS: z.coerce.number().int().min(1).max(1_296_000).optional(),
});

/** One hook of the `GEOHOOK_CONFIG` file. */
export const hookFileSchema = z
  .object({
    name: hookName,
    secrets: z.array(z.string().min(1, 'non-empty keys')).default([]),
    /** Answer ArcGIS Online's `crc_token` challenges with the first key (docs/receiver.md#the-challenge). @defaultValue true */
    crc: z.boolean().default(true),
    /** URLs, besides ADMIN_URL's site and TRUSTED_ORIGINS, whose services this hook's deliveries may be read at. */
    trustedOrigins: z.array(trustedUrl).default([]),
    services: z.array(z.string()).default([]),
    changeTypes: z.array(z.string()).default(['*']),
  })
  .strict();

/** How consumers retry an event whose handler failed (BullMQ job options, set when the event is enqueued). */
const retrySchema = z
  .object({
    /** Attempts in all, the first one included; then the job stays in the failed set. @defaultValue 5 */
    attempts: z.number().int().min(1).max(100).default(defaultRetryPolicy.attempts),
    /** Backoff between attempts: `exponential` waits delayMs, 2×, 4×…; `fixed` always delayMs. */
    backoff: z
      .object({
        type: z.enum(['exponential', 'fixed']).default(defaultRetryPolicy.backoff.type),
        /** @defaultValue 1000 */
        delayMs: z.number().int().min(0).max(86_400_000).default(defaultRetryPolicy.backoff.delayMs),
        /** Fraction of each delay drawn at random, 0 to 1, so that retries spread out. @defaultValue 0.2 */
        jitter: z.number().min(0).max(1).default(defaultRetryPolicy.backoff.jitter),
      })
      .strict()
      .default(defaultRetryPolicy.backoff),
  })
  .strict();

const milliseconds = z.number().int('whole milliseconds').min(100, 'from 100 to 600000 ms').max(600_000, 'from 100 to 600000 ms');

/** How long the receiver waits for a slow or idle client before it cuts the connection. */
const timeoutsSchema = z
  .object({
    /**
     * To receive a request's headers: the first request's counted from the connection, a later one's from its first byte.
     * @defaultValue 10000
     */
    headersMs: milliseconds.default(10_000),
    /** To receive a whole request, headers and body. @defaultValue 30000 */
    requestMs: milliseconds.default(30_000),
    /** Of silence on a socket while a request is under way. @defaultValue 60000 */
    socketIdleMs: milliseconds.default(60_000),
    /** Idle between two requests of a keep-alive connection; above load balancers' usual 60 s. @defaultValue 72000 */
    keepAliveMs: milliseconds.default(72_000),
  })
  .strict()
  .refine((timeouts) => timeouts.headersMs <= timeouts.requestMs, { message: 'at most requestMs', path: ['headersMs'] });

/** A where clause of change events: read once here, so that a clause geohook cannot read stops start-up. */
export const whereClause = z
  .string()
  .min(1)
  .max(10_000)
  .superRefine((clause, context) => {
    try {
      parseWhere(clause);
    } catch (err) {
      context.addIssue({ code: 'custom', message: `not a where clause geohook reads: ${(err as Error).message}` });
    }
  });

/** A `changes` service's `when` and `emit`: as a relay route's. */
const { when: changesWhen, emit: changesEmit } = routeFilterFields(whereClause);

/** An envelope of change events' `within`. */
const withinEnvelope = z
  .object({
    xmin: z.number(),
    ymin: z.number(),
    xmax: z.number(),
    ymax: z.number(),
    spatialReference: z
      .object({ wkid: z.union([z.literal(4326), z.literal(3857), z.literal(102100)], { error: '4326, 3857 or 102100' }) })
      .strict()
      .optional(),
  })
  .strict()
  .refine(({ xmin, ymin, xmax, ymax }) => xmin <= xmax && ymin <= ymax, 'xmin ≤ xmax and ymin ≤ ymax');

/** What the dashboard may change in the queues (`dashboard.changes`). */
export const dashboardChanges = ['none', 'jobs', 'all'] as const;

/**
 * The queue dashboard at `/ui`: its credentials (a token, or a user name and password; none here when
 * DASHBOARD_TOKEN gives the token) and what it may change.
 */
const dashboardSchema = z
  .object({
    token: z.string().min(16, 'a token of at least 16 characters').optional(),
    username: z.string().min(1, 'a user name').optional(),
    password: z.string().min(12, 'a password of at least 12 characters').optional(),
    /** `none`: read only; `jobs`: retry, remove and promote jobs; `all`: every change Bull Board offers. @defaultValue 'jobs' */
    changes: z.enum(dashboardChanges, { error: 'none, jobs or all' }).default('jobs'),
  })
  .strict()
  .refine((dashboard) => (dashboard.username === undefined) === (dashboard.password === undefined), {
    message: 'username and password go together',
    path: ['password'],
  })
  .refine((dashboard) => dashboard.token === undefined || dashboard.username === undefined, {
    message: 'either {"token"} or {"username", "password"}, not both',
    path: ['token'],
  });

const hostPort = z.object({ host: z.string().min(1, 'a host name or address'), port: z.number().int().min(1).max(65535) }).strict();

/** TLS of a Redis connection: `true` for the system's CAs, or Node's TLS options that can be written in JSON. */
const tlsSchema = z.union([
  z.literal(true).transform(() => ({})),
  z
    .object({
      ca: z.union([z.string(), z.array(z.string())]).optional(),
      cert: z.string().optional(),
      key: z.string().optional(),
      servername: z.string().optional(),
      rejectUnauthorized: z.boolean().optional(),
    })
    .strict(),
]);

/**
 * The ioredis connection options geohook passes through (README "Redis Sentinel and Cluster"). Those that
 * decide retries, the offline queue and blocking are geohook's per connection role, and `keyPrefix`
 * breaks BullMQ: they are refused like any unknown key.
 */
const redisOptionsSchema = z
  .object({
    username: z.string().min(1).optional(),
    password: z.string().min(1).optional(),
    db: z.number().int().min(0).max(15).optional(),
    tls: tlsSchema.optional(),
    family: z.union([z.literal(0), z.literal(4), z.literal(6)]).optional(),
    connectTimeout: z.number().int().min(100).max(600_000).optional(),
    commandTimeout: z.number().int().min(100).max(600_000).optional(),
    keepAlive: z.number().int().min(0).optional(),
    connectionName: z.string().min(1).optional(),
    /** Sentinel: where the sentinels are, and the name of the master they watch. */
    sentinels: z.array(hostPort).min(1, 'at least one sentinel').optional(),
    name: z.string().min(1, 'the master name the sentinels watch').optional(),
    sentinelUsername: z.string().min(1).optional(),
    sentinelPassword: z.string().min(1).optional(),
    sentinelTLS: tlsSchema.optional(),
    enableTLSForSentinelMode: z.boolean().optional(),
    natMap: z.record(z.string(), hostPort).optional(),
  })
  .strict()
  .refine((options) => (options.sentinels === undefined) === (options.name === undefined), {
    message: 'sentinels and name go together',
    path: ['name'],
  });

/** A Redis Cluster: seed nodes (REDIS_URL when empty) and the cluster options of ioredis that JSON can hold. */
const redisClusterSchema = z
  .object({
    nodes: z.array(hostPort).default([]),
    /** Address translation, e.g. for a cluster whose nodes announce addresses clients cannot reach. */
    natMap: z.record(z.string(), hostPort).optional(),
    slotsRefreshTimeout: z.number().int().min(100).max(600_000).optional(),
    slotsRefreshInterval: z.number().int().min(1000).optional(),
    maxRedirections: z.number().int().min(1).max(1000).optional(),
    retryDelayOnFailover: z.number().int().min(0).max(60_000).optional(),
    retryDelayOnClusterDown: z.number().int().min(0).max(60_000).optional(),
    retryDelayOnTryAgain: z.number().int().min(0).max(60_000).optional(),
    useSRVRecords: z.boolean().optional(),
  })
  .strict();

/** How geohook reaches Redis beyond REDIS_URL: connection options, Sentinel, or a Cluster. */
const redisSchema = z
  .object({
    options: redisOptionsSchema.default({}),
    cluster: redisClusterSchema.optional(),
  })
  .strict()
  .refine((redis) => redis.cluster === undefined || redis.options.sentinels === undefined, {
    message: 'Sentinel or Cluster, not both',
    path: ['cluster'],
  });

/** The `GEOHOOK_CONFIG` file. Unknown keys are refused so that a typo is not silently ignored. */
export const configFileSchema = z
  .object({
    hooks: z.array(hookFileSchema).default([]),
    /** How long an event id is remembered per hook. @defaultValue 86400 */
    dedupRetentionSeconds: z
      .number()
      .int()
      .min(1)
      .max(30 * DEFAULT_DEDUP_RETENTION_SECONDS)
      .default(DEFAULT_DEDUP_RETENTION_SECONDS),
    /** How many completed jobs are kept, and for how long, for inspection and replay. */
    completedJobs: z
      .object({
        ageSeconds: z.number().int().min(0).default(defaultCompletedJobs.ageSeconds),
        count: z.number().int().min(0).default(defaultCompletedJobs.count),
      })
      .strict()
      .default(defaultCompletedJobs),
    /** How consumers retry failed events. */
    retry: retrySchema.default(defaultRetryPolicy),
    /** The queue dashboard at `/ui`: its credentials (without them, or DASHBOARD_TOKEN, there is none) and what it may change. */
    dashboard: dashboardSchema.optional(),
    /** How long the receiver waits for Redis to store an event before it answers 503. @defaultValue 2000 */
    enqueueTimeoutMs: z.number().int().min(50).max(30_000).default(2000),
    /** Redis beyond REDIS_URL: ioredis connection options (credentials, TLS, Sentinel) and Cluster. */
    redis: redisSchema.default({ options: {} }),
    /** Connections the receiver holds open at once; further ones are closed as soon as they are accepted. @defaultValue 4096 */
    maxConnections: z.number().int('a whole number').min(1, 'from 1 to 1000000').max(1_000_000, 'from 1 to 1000000').default(4096),
    /** When the receiver cuts slow and idle clients off. */
    timeouts: timeoutsSchema.default({ headersMs: 10_000, requestMs: 30_000, socketIdleMs: 60_000, keepAliveMs: 72_000 }),
    /** Organisation-wide webhook settings applied at the start of self-registration (an organisation administrator). */
    settings: orgSettingsSchema.optional(),
    /** Placement policies applied at the start of self-registration: service → `servicePlacementPolicy`. */
    placement: placementSchema.default({}),
    /** Change events per service (docs/changes.md#configuration): service → its tracked fields and layers. */
    changes: z
      .record(
        serviceName.refine((name) => name.endsWith('.FeatureServer'), 'feature services: folder/name.FeatureServer'),
        z
          .object({
            /** Fields whose previous values its events carry (`*` for all); CHANGES_TRACK otherwise. */
            track: z.union([z.literal('*'), z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'field names'))]).optional(),
            /** The layers and tables followed; every one otherwise. */
            layers: z.array(z.number().int().min(0)).min(1).optional(),
            /** A clause for every layer that has its fields, or clauses by layer id (docs/changes.md#filters). */
            where: z
              .union([whereClause, z.record(z.string(), whereClause)])
              .refine(
                (where) => typeof where === 'string' || Object.keys(where).every((key) => /^\d+$/.test(key)),
                'clauses by layer id: {"0": "…"}',
              )
              .optional(),
            /** Only features whose geometry meets this envelope, in 4326 unless it says 3857 or 102100. */
            within: withinEnvelope.optional(),
            /** Only updates of this field, from and to these values (docs/changes.md#transitions). */
            when: changesWhen,
            /** Adds `change.entered` and `change.left` for crossings of `where` (docs/changes.md#transitions). */
            emit: changesEmit,
            /** `initial`: read every row once (`change.read`) when the service is first followed, then stream. */
            snapshot: z.literal('initial', { error: 'initial' }).optional(),
            /**
             * `metadata`: events of features whose attachments changed carry them; `link`: each with a signed geohook
             * URL of its bytes too (docs/changes.md#attachments).
             */
            attachments: z.enum(['none', 'metadata', 'link'], { error: 'none, metadata or link' }).optional(),
            /** How long a submission stays open after its last part (docs/submissions.md); 0: no `change.submission`. */
            submissionWindowMs: z.number().int().min(0).max(600_000).optional(),
          })
          .strict()
          .superRefine((settings, context) => {
            for (const issue of changesFilterIssues(settings))
              context.addIssue({ code: 'custom', message: issue.message, path: [issue.path] });
          }),
      )
      .default({}),
    /** Relay routes: where events are sent on, signed, in which format (docs/relays.md). */
    relays: relaysSchema({ retry: retrySchema, where: whereClause }).default([]),
    /** Subscriptions: named readers each of which gets every event it takes (docs/subscriptions.md). */
    subscriptions: subscriptionsSchema(whereClause).default([]),
    /** The backlog caps of subscriptions that set none. @defaultValue {"count":100000,"ageSeconds":604800} */
    subscriptionBacklog: z
      .object({
        count: z.number().int().min(1).max(100_000_000).default(DEFAULT_BACKLOG.count),
        ageSeconds: z
          .number()
          .int()
          .min(1)
          .max(365 * 86_400)
          .default(DEFAULT_BACKLOG.ageSeconds),
      })
      .strict()
      .default(DEFAULT_BACKLOG),
    /** Attachment links (`attachments: "link"`, docs/changes.md#attachment-links): where they point and how long they open. */
    attachmentLinks: z
      .object({
        /** The public base URL of the links (no query, no credentials). @defaultValue PUBLIC_URL */
        baseUrl: linkBaseUrl.optional(),
        /** Seconds a link opens its attachment from when its event is made (1 minute to 7 days). @defaultValue 3600 */
        lifetimeSeconds: z
          .number({ error: 'a whole number of seconds from 60 to 604800' })
          .int('a whole number of seconds from 60 to 604800')
          .min(60, 'a whole number of seconds from 60 to 604800')
          .max(7 * 86_400, 'a whole number of seconds from 60 to 604800')
          .default(3600),
      })
      .strict()
      .default({ lifetimeSeconds: 3600 }),
    /**
     * The event log the fan-out reads: how long it keeps events every destination has (what `--from` reaches), and
     * how far behind the acknowledgements the fan-out may fall while it yields to them.
     */
    eventLog: z
      .object({
        /** @defaultValue 86400 */
        retentionSeconds: z
          .number()
          .int()
          .min(0)
          .max(30 * 86_400)
          .default(86_400),
        /** While the acknowledgements are saturated, the fan-out waits until its oldest event is this old (0: never waits). @defaultValue 30 */
        maxLagSeconds: z
          .number({ error: 'from 0 to 3600 seconds' })
          .min(0, 'from 0 to 3600 seconds')
          .max(3600, 'from 0 to 3600 seconds')
          .default(DEFAULT_FANOUT_MAX_LAG_SECONDS),
      })
      .strict()
      .default({ retentionSeconds: 86_400, maxLagSeconds: DEFAULT_FANOUT_MAX_LAG_SECONDS }),
    /** Seconds between two reloads of the generated signature keys from Redis (picks up a key rotation). @defaultValue 5 */
    keyReloadSeconds: z.number().min(0.05).max(3600).default(5),
    /**
     * Services to register the `default` hook on, beside REGISTER's (which an environment caps at 128 KiB): names
     * and patterns (docs/registration.md#many-services).
     */
    register: z.array(registerEntry).default([]),
    /** Self-registration (REGISTER): how often it heals, how many services at once, and how it backs off after a failure. */
    registration: z
      .object({
        /** Seconds between two checks of the registered webhooks. @defaultValue 300 */
        intervalSeconds: z.number().min(0.1).max(86_400).default(300),
        /** First wait after a failed registration; it doubles up to retryMaxSeconds. @defaultValue 1 */
        retryInitialSeconds: z.number().min(0.01).max(3600).default(1),
        /** Longest wait between two failed registrations. @defaultValue 60 */
        retryMaxSeconds: z.number().min(0.01).max(3600).default(60),
        /** Services a pass checks at once (each with its own admin requests). @defaultValue 16 */
        concurrency: z.number().int('a whole number').min(1, 'from 1 to 256').max(256, 'from 1 to 256').default(16),
      })
      .strict()
      .default({ intervalSeconds: 300, retryInitialSeconds: 1, retryMaxSeconds: 60, concurrency: 16 }),
  })
  .strict();

export type EnvInput = z.input<typeof envSchema>;
export type ConfigFile = z.output<typeof configFileSchema>;
