import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import type { ServicePlacementPolicy } from '../admin/placement-policy.js';
import type { WebhookSettings } from '../emulator/types.js';
import { ConfigError } from '../errors.js';
import { configFileSchema, envSchema } from './schema.js';

/** A hook the receiver accepts deliveries for. */
export interface HookConfig {
  /** Path segment of `POST /webhooks/:hook`. */
  readonly name: string;
  /** Signature keys; any one verifies. The first answers `crc_token` challenges. */
  readonly secrets: readonly string[];
  /** Services the hook is registered on (`folder/name.Type`). */
  readonly services: readonly string[];
  /** Feature-service triggers used at registration. */
  readonly changeTypes: readonly string[];
}

/** How geohook authenticates to the admin API. */
export type AdminAuth = { token: string } | { username: string; password: string; tokenUrl?: string };

/** Where the admin API is and how to reach it; `undefined` when ADMIN_URL is unset. */
export interface AdminConfig {
  readonly url: string;
  readonly auth: AdminAuth | undefined;
  /** Services to register the `default` hook on (REGISTER). */
  readonly register: readonly string[];
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
  readonly prefix: string;
  readonly requireSignature: boolean;
  /** Lower-cased header names, in order of preference. */
  readonly signatureHeaders: readonly string[];
  readonly maxBodyBytes: number;
  readonly publicUrl: string;
  readonly logLevel: string;
  readonly hooks: ReadonlyMap<string, HookConfig>;
  readonly dedupRetentionSeconds: number;
  readonly enqueueTimeoutMs: number;
  /** Seconds between two reloads of the generated keys from Redis (`keyReloadSeconds`). */
  readonly keyReloadSeconds: number;
  /** Completed jobs kept for inspection and replay (the dedup window does not depend on them). */
  readonly completedJobs: { readonly ageSeconds: number; readonly count: number };
  readonly admin: AdminConfig | undefined;
  /** Self-registration timing (`registration` in GEOHOOK_CONFIG). */
  readonly registration: RegistrationTiming;
  /** Port of the emulator `geohook up` starts when ADMIN_URL is unset. */
  readonly emulatorPort: number;
}

/** How often self-registration heals and how it backs off after a failure. */
export interface RegistrationTiming {
  /** Seconds between two checks once registered. @defaultValue 300 */
  readonly intervalSeconds: number;
  /** First wait after a failure, doubled each time. @defaultValue 1 */
  readonly retryInitialSeconds: number;
  /** Longest wait after a failure. @defaultValue 60 */
  readonly retryMaxSeconds: number;
}

/** Values that win over the environment (command-line flags). */
export type ConfigOverrides = Partial<Record<keyof z.input<typeof envSchema>, string | undefined>>;

function describeIssue(issue: z.core.$ZodIssue, source: string): string {
  const path = issue.path.join('.');
  const name = source === 'environment' ? path : `${source}${path ? ` at ${path}` : ''}`;
  return `${name}: ${issue.message}`;
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
  } catch (err) {
    // The parser's message may quote the file, secrets included: only the position is reported.
    const position = /position (\d+)/.exec((err as Error).message)?.[1];
    throw new ConfigError(`GEOHOOK_CONFIG: ${path} is not valid JSON${position === undefined ? '' : ` (at character ${position})`}`);
  }
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}

/** A Map whose mutators throw: a frozen Map still accepts `set`. */
function frozenMap<K, V>(entries: Iterable<[K, V]>): ReadonlyMap<K, V> {
  const map = new Map(entries);
  const refuse = (): never => {
    throw new TypeError('the configuration is frozen');
  };
  map.set = refuse;
  map.delete = refuse;
  map.clear = refuse;
  return Object.freeze(map);
}

/**
 * Reads and validates the configuration once. Throws {@link ConfigError} whose message is one line naming
 * the variable and what it allows.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: ConfigOverrides = {}): GeohookConfig {
  const merged: Record<string, string | undefined> = {};
  for (const key of Object.keys(envSchema.shape)) {
    const value = (overrides[key as keyof ConfigOverrides] ?? env[key])?.trim();
    merged[key] = value === '' ? undefined : value;
  }
  const parsedEnv = envSchema.safeParse(merged);
  if (!parsedEnv.success) throw new ConfigError(describeIssue(parsedEnv.error.issues[0]!, 'environment'));
  const vars = parsedEnv.data;

  const file = vars.GEOHOOK_CONFIG === undefined ? {} : readConfigFile(vars.GEOHOOK_CONFIG);
  const parsedFile = configFileSchema.safeParse(file);
  if (!parsedFile.success) {
    throw new ConfigError(describeIssue(parsedFile.error.issues[0]!, `GEOHOOK_CONFIG (${vars.GEOHOOK_CONFIG})`));
  }

  const hooks = new Map<string, HookConfig>([
    ['default', { name: 'default', secrets: [], services: [], changeTypes: ['*'] }],
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
  if (vars.ADMIN_URL === undefined && (vars.ADMIN_TOKEN !== undefined || vars.ADMIN_USERNAME !== undefined || vars.REGISTER !== undefined)) {
    throw new ConfigError('ADMIN_URL: required with ADMIN_TOKEN, ADMIN_USERNAME or REGISTER (an http(s) URL of the admin root)');
  }
  const auth: AdminAuth | undefined =
    vars.ADMIN_TOKEN !== undefined
      ? { token: vars.ADMIN_TOKEN }
      : vars.ADMIN_USERNAME !== undefined
        ? { username: vars.ADMIN_USERNAME, password: vars.ADMIN_PASSWORD!, ...(vars.TOKEN_URL === undefined ? {} : { tokenUrl: vars.TOKEN_URL }) }
        : undefined;

  return deepFreeze({
    port: vars.PORT,
    host: vars.HOST,
    redisUrl: vars.REDIS_URL,
    prefix: vars.GEOHOOK_PREFIX,
    requireSignature: vars.REQUIRE_SIGNATURE,
    signatureHeaders: vars.SIGNATURE_HEADER.map((name) => name.toLowerCase()),
    maxBodyBytes: vars.MAX_BODY_BYTES,
    publicUrl: vars.PUBLIC_URL ?? `http://127.0.0.1:${vars.PORT}`,
    logLevel: vars.LOG_LEVEL,
    hooks: frozenMap([...hooks].map(([name, hook]) => [name, deepFreeze(hook)])),
    dedupRetentionSeconds: parsedFile.data.dedupRetentionSeconds,
    enqueueTimeoutMs: parsedFile.data.enqueueTimeoutMs,
    keyReloadSeconds: parsedFile.data.keyReloadSeconds,
    completedJobs: parsedFile.data.completedJobs,
    registration: parsedFile.data.registration,
    emulatorPort: vars.EMULATOR_PORT,
    admin:
      vars.ADMIN_URL === undefined
        ? undefined
        : {
            url: vars.ADMIN_URL,
            auth,
            register: vars.REGISTER ?? [],
            changeTypes: vars.CHANGE_TYPES,
            settings: parsedFile.data.settings,
            placement: parsedFile.data.placement,
          },
  });
}
