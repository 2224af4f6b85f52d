import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import type { AdminAuth } from '../arcgis/admin-auth.js';
import { isOnlineAdminRoot } from '../arcgis/online-admin.js';
import { isPattern } from '../arcgis/service-name.js';
import { ConfigError } from '../errors.js';
import { assertClusterPrefix } from './cluster-prefix.js';
import { describeFileIssues, fileIssueMessage } from './file-issues.js';
import { deepFreeze, frozenMap } from './freeze.js';
import { describeJsonSyntaxError } from './json-syntax-error.js';
import { mirrorConfigOf } from './mirror-schema.js';
import { configFileSchema, emulatorEnvSchema, envSchema, type ConfigFile } from './schema.js';
import type { DashboardConfig, EmulatorConfig, GeohookConfig, HookConfig, RedisSettings } from './types.js';
import { urlOutline } from './url-outline.js';

export type {
  AdminConfig,
  EmulatorConfig,
  EmulatorRole,
  EmulatorUser,
  DashboardAuth,
  DashboardChanges,
  DashboardConfig,
  GeohookConfig,
  HookConfig,
  ReceiverTimeouts,
  RedisSettings,
  RegistrationTiming,
} from './types.js';
export type { RetryPolicy } from './retry-policy.js';

/** Values that win over the environment (command-line flags). */
export type ConfigOverrides = Partial<
  Record<keyof z.input<typeof envSchema> | keyof z.input<typeof emulatorEnvSchema>, string | undefined>
>;

function describeVariableIssue(issue: z.core.$ZodIssue): string {
  return `${issue.path.join('.')}: ${issue.message}`;
}

/** What a right value of a variable looks like, named when a wrong one is refused. */
const EXAMPLES: Readonly<Record<string, string>> = {
  ADMIN_URL: 'https://gis.example.com/arcgis/admin (ArcGIS Online: https://services.arcgis.com/<orgId>/ArcGIS/rest/admin)',
  PUBLIC_URL: 'https://geohook.example.com',
  TOKEN_URL: 'https://gis.example.com/portal/sharing/rest/generateToken',
  PORTAL_URL: 'https://gis.example.com/portal (ArcGIS Online: https://<org>.maps.arcgis.com)',
  ALERT_URL: 'https://hooks.slack.com/services/…',
  TRUSTED_ORIGINS: 'https://gis2.example.com,https://services.arcgis.com/<orgId>/ArcGIS/',
  REDIS_URL: 'redis://redis.internal:6379',
  REGISTER: 'Tools/Buffer.GPServer,Hosted/Parcels.FeatureServer',
};

/** Variables whose values are never repeated in a message: they hold secrets (a Redis URL may hold its password). */
const SECRET = /SECRET|PASSWORD|TOKEN$|KEY|USERS|REDIS_URL/;
/** Variables holding URLs (or comma lists of them), which may carry secrets (a password, a webhook key): only their schemes and hosts are repeated. */
const URL_VARIABLE = /_URL$|_ORIGINS$/;

/** A refused variable in one line: what it must be, an example, and the value it had (unless it is a secret; a URL's scheme and host). */
function describeVariable(issue: z.core.$ZodIssue, merged: Record<string, string | undefined>): string {
  const name = String(issue.path[0] ?? '');
  const value = merged[name];
  const example = EXAMPLES[name] === undefined ? '' : `, e.g. ${EXAMPLES[name]}`;
  const shown =
    value === undefined || SECRET.test(name) ? undefined : URL_VARIABLE.test(name) ? value.split(',').map(urlOutline).join(',') : value;
  const got = shown === undefined ? '' : ` (got ${JSON.stringify(shown)})`;
  return `${describeVariableIssue(issue)}${example}${got}`;
}

/** The variables a schema reads, overrides first; blank values count as unset. */
function variables(schema: z.ZodObject, env: NodeJS.ProcessEnv, overrides: ConfigOverrides): Record<string, string | undefined> {
  const merged: Record<string, string | undefined> = {};
  for (const key of Object.keys(schema.shape)) {
    const value = (overrides[key as keyof ConfigOverrides] ?? env[key])?.trim();
    merged[key] = value === '' ? undefined : value;
  }
  return merged;
}

function parseVariables<S extends z.ZodObject>(schema: S, merged: Record<string, string | undefined>): z.output<S> {
  const parsed = schema.safeParse(merged);
  if (!parsed.success) throw new ConfigError(describeVariable(parsed.error.issues[0]!, merged));
  return parsed.data;
}

function readConfigFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`GEOHOOK_CONFIG: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new ConfigError(`GEOHOOK_CONFIG (${path}): ${describeJsonSyntaxError(text)}`);
  }
}

/**
 * DASHBOARD_TOKEN wins over the credentials of the file's `dashboard`, whose `changes` hold either way; no
 * credentials at all means no dashboard.
 */
function dashboardConfig(token: string | undefined, file: ConfigFile['dashboard'], source: string): DashboardConfig | undefined {
  const changes = file?.changes ?? 'jobs';
  if (token !== undefined) return { auth: { token }, changes };
  if (file === undefined) return undefined;
  if (file.token !== undefined) return { auth: { token: file.token }, changes };
  if (file.username !== undefined && file.password !== undefined)
    return { auth: { username: file.username, password: file.password }, changes };
  throw new ConfigError(`${source} at "dashboard": either {"token"} or {"username", "password"} (or DASHBOARD_TOKEN)`);
}

/** The `redis` section as connection settings; with a Cluster, the prefix it needs (CLUSTER_PREFIX unless one is set). */
function redisSettings(file: ConfigFile['redis'], prefix: string | undefined): { redis: RedisSettings; prefix: string | undefined } {
  if (file.cluster === undefined) return { redis: { options: file.options, cluster: undefined }, prefix };
  const { nodes, ...options } = file.cluster;
  if (prefix !== undefined) assertClusterPrefix(prefix);
  return { redis: { options: file.options, cluster: { nodes, options } }, prefix: prefix ?? CLUSTER_PREFIX };
}

/** The default prefix with a Redis Cluster: the usual one as a hash tag. */
const CLUSTER_PREFIX = '{geohook}';

/**
 * Reads and validates the configuration once. Throws {@link ConfigError} whose message is one line naming
 * the variable and what it allows; for GEOHOOK_CONFIG, one line per problem of the file, each naming its path.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: ConfigOverrides = {}): GeohookConfig {
  const merged = variables(envSchema, env, overrides);
  const vars = parseVariables(envSchema, merged);

  const file = vars.GEOHOOK_CONFIG === undefined ? {} : readConfigFile(vars.GEOHOOK_CONFIG);
  const parsedFile = configFileSchema.safeParse(file, { error: fileIssueMessage });
  if (!parsedFile.success) {
    const lines = describeFileIssues(parsedFile.error.issues, configFileSchema, file, `GEOHOOK_CONFIG (${vars.GEOHOOK_CONFIG})`);
    throw new ConfigError(lines.join('\n'));
  }

  const { redis, prefix } = redisSettings(parsedFile.data.redis, merged.GEOHOOK_PREFIX);

  const hooks = new Map<string, HookConfig>([
    ['default', { name: 'default', secrets: [], crc: true, trustedOrigins: [], services: [], changeTypes: ['*'] }],
  ]);
  const namesInFile = new Set<string>();
  for (const hook of parsedFile.data.hooks) {
    if (namesInFile.has(hook.name)) throw new ConfigError(`GEOHOOK_CONFIG: hook "${hook.name}" is defined twice`);
    namesInFile.add(hook.name);
    hooks.set(hook.name, hook);
  }
  if (vars.HOOK_SECRETS !== undefined) {
    hooks.set('default', { ...hooks.get('default')!, secrets: vars.HOOK_SECRETS });
  }

  if (vars.ADMIN_USERNAME !== undefined && vars.ADMIN_PASSWORD === undefined) {
    throw new ConfigError('ADMIN_PASSWORD: required with ADMIN_USERNAME');
  }
  if (
    vars.ADMIN_URL === undefined &&
    (vars.ADMIN_TOKEN !== undefined ||
      vars.ADMIN_USERNAME !== undefined ||
      vars.REGISTER !== undefined ||
      vars.POLL !== undefined ||
      vars.CHANGES !== undefined ||
      Object.keys(parsedFile.data.changes).length > 0 ||
      parsedFile.data.register.length > 0)
  ) {
    throw new ConfigError(
      'ADMIN_URL: required with ADMIN_TOKEN, ADMIN_USERNAME, REGISTER, register, POLL, CHANGES or changes (an http(s) URL of the admin root)',
    );
  }
  const patterns = [...(vars.REGISTER ?? []), ...parsedFile.data.register].filter(isPattern);
  if (vars.ADMIN_URL !== undefined && isOnlineAdminRoot(vars.ADMIN_URL) && patterns.length > 0) {
    throw new ConfigError(
      `REGISTER: patterns are resolved with ArcGIS Enterprise's findServices, which ArcGIS Online has not: name its hosted feature layers one by one (got "${patterns[0]}")`,
    );
  }
  const auth: AdminAuth | undefined =
    vars.ADMIN_TOKEN !== undefined
      ? { token: vars.ADMIN_TOKEN }
      : vars.ADMIN_USERNAME !== undefined
        ? {
            username: vars.ADMIN_USERNAME,
            password: vars.ADMIN_PASSWORD!,
            ...(vars.TOKEN_URL === undefined ? {} : { tokenUrl: vars.TOKEN_URL }),
          }
        : undefined;
  const changesServices = [...new Set([...(vars.CHANGES ?? []), ...Object.keys(parsedFile.data.changes)])];

  return deepFreeze({
    port: vars.PORT,
    host: vars.HOST,
    redisUrl: vars.REDIS_URL,
    redis,
    prefix: prefix ?? vars.GEOHOOK_PREFIX,
    requireSignature: vars.REQUIRE_SIGNATURE,
    signatureHeaders: vars.SIGNATURE_HEADER.map((name) => name.toLowerCase()),
    maxBodyBytes: vars.MAX_BODY_BYTES,
    publicUrl: vars.PUBLIC_URL ?? `http://127.0.0.1:${vars.PORT}`,
    logLevel: vars.LOG_LEVEL,
    logFormat: vars.LOG_FORMAT,
    durability: vars.DURABILITY,
    spoolDir: vars.SPOOL_DIR,
    hooks: frozenMap([...hooks].map(([name, hook]) => [name, deepFreeze(hook)])),
    trustedOrigins: vars.TRUSTED_ORIGINS ?? [],
    dedupRetentionSeconds: parsedFile.data.dedupRetentionSeconds,
    enqueueTimeoutMs: parsedFile.data.enqueueTimeoutMs,
    timeouts: parsedFile.data.timeouts,
    maxConnections: parsedFile.data.maxConnections,
    keyReloadSeconds: parsedFile.data.keyReloadSeconds,
    completedJobs: parsedFile.data.completedJobs,
    registration: parsedFile.data.registration,
    emulatorPort: vars.EMULATOR_PORT,
    retry: parsedFile.data.retry,
    dashboard: dashboardConfig(vars.DASHBOARD_TOKEN, parsedFile.data.dashboard, `GEOHOOK_CONFIG (${vars.GEOHOOK_CONFIG})`),
    metricsToken: vars.METRICS_TOKEN,
    relays: parsedFile.data.relays,
    subscriptions: parsedFile.data.subscriptions,
    subscriptionBacklog: parsedFile.data.subscriptionBacklog,
    attachmentLinks: {
      baseUrl: parsedFile.data.attachmentLinks.baseUrl ?? vars.PUBLIC_URL ?? `http://127.0.0.1:${vars.PORT}`,
      lifetimeSeconds: parsedFile.data.attachmentLinks.lifetimeSeconds,
    },
    eventLog: parsedFile.data.eventLog,
    mirror: mirrorConfigOf(vars, changesServices, vars.ADMIN_URL),
    backfill: { concurrency: vars.BACKFILL_CONCURRENCY, timeoutSeconds: vars.BACKFILL_TIMEOUT_SECONDS },
    alertUrl: vars.ALERT_URL,
    alertDebounceSeconds: vars.ALERT_DEBOUNCE_SECONDS,
    admin:
      vars.ADMIN_URL === undefined
        ? undefined
        : {
            url: vars.ADMIN_URL,
            auth,
            portalUrl: portalUrlOf(vars.PORTAL_URL, vars.TOKEN_URL, vars.ADMIN_URL),
            register: [...new Set([...(vars.REGISTER ?? []), ...parsedFile.data.register])],
            poll: vars.POLL ?? [],
            pollIntervalSeconds: vars.POLL_INTERVAL_SECONDS,
            changes: {
              services: changesServices,
              track: vars.CHANGES_TRACK?.includes('*') === true ? '*' : (vars.CHANGES_TRACK ?? []),
              byService: parsedFile.data.changes,
            },
            changeTypes: vars.CHANGE_TYPES,
            settings: parsedFile.data.settings,
            placement: parsedFile.data.placement,
          },
  });
}

/**
 * The portal whose `sharing/rest` checks Survey123 tokens: PORTAL_URL, else the portal of TOKEN_URL
 * (`<portal>/sharing/rest/generateToken`), else an ArcGIS Online admin root's origin; from configuration only.
 */
function portalUrlOf(portalUrl: string | undefined, tokenUrl: string | undefined, adminUrl: string): string | undefined {
  if (portalUrl !== undefined) return portalUrl.replace(/\/+$/, '');
  const sharing = tokenUrl === undefined ? null : /^(.*)\/sharing\/rest\/generateToken\/?$/i.exec(tokenUrl);
  if (sharing !== null) return sharing[1];
  return isOnlineAdminRoot(adminUrl) ? new URL(adminUrl).origin : undefined;
}

/** Reads and validates the configuration of `geohook emulator` (EMULATOR_PORT, EMULATOR_USERS, EMULATOR_TOKEN_SECONDS) once. */
export function loadEmulatorConfig(env: NodeJS.ProcessEnv = process.env, overrides: ConfigOverrides = {}): EmulatorConfig {
  const vars = parseVariables(emulatorEnvSchema, variables(emulatorEnvSchema, env, overrides));
  return deepFreeze({ port: vars.EMULATOR_PORT, users: vars.EMULATOR_USERS, tokenSeconds: vars.EMULATOR_TOKEN_SECONDS });
}
