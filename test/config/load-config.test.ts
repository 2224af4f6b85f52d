import { join } from 'node:path';
import t, { type Test } from 'tap';
import { loadConfig, type ConfigOverrides } from '../../src/config/load-config.js';
import { ConfigError } from '../../src/errors.js';

/** The ConfigError `loadConfig(env, overrides)` throws; fails the test when it throws nothing or something else. */
function configError(env: NodeJS.ProcessEnv, overrides: ConfigOverrides = {}): ConfigError {
  try {
    loadConfig(env, overrides);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error(`loadConfig(${JSON.stringify(env)}) did not throw`);
}

/** Asserts a ConfigError with the stable code and a one-line message starting with `prefix`. */
function assertConfigError(t: Test, err: ConfigError, prefix: string): void {
  t.equal(err.code, 'GEOHOOK_ERR_CONFIG');
  t.equal(err.name, 'ConfigError');
  t.equal(err.message.startsWith(prefix), true, `${JSON.stringify(err.message)} starts with ${JSON.stringify(prefix)}`);
  t.equal(err.message.includes('\n'), false, `${JSON.stringify(err.message)} is one line`);
}

/** Writes `content` as hooks.json in a fresh test directory and returns its path. */
function configFile(t: Test, content: string): string {
  return join(t.testdir({ 'hooks.json': content }), 'hooks.json');
}

t.test('defaults apply when the environment is empty', async (t) => {
  const config = loadConfig({});
  t.equal(config.port, 8080);
  t.equal(config.host, '0.0.0.0');
  t.equal(config.redisUrl, undefined);
  t.equal(config.prefix, 'geohook');
  t.equal(config.requireSignature, true);
  t.strictSame(config.signatureHeaders, ['x-service', 'x-esrihook-signature']);
  t.equal(config.maxBodyBytes, 1_048_576);
  t.equal(config.publicUrl, 'http://127.0.0.1:8080');
  t.equal(config.logLevel, 'info');
  t.strictSame([...config.hooks.keys()], ['default']);
  t.strictSame(config.hooks.get('default'), {
    name: 'default',
    secrets: [],
    crc: true,
    trustedOrigins: [],
    services: [],
    changeTypes: ['*'],
  });
  t.equal(config.dedupRetentionSeconds, 86_400);
  t.equal(config.enqueueTimeoutMs, 2000);
});

t.test('the default public URL follows PORT', async (t) => {
  t.equal(loadConfig({ PORT: '9123' }).publicUrl, 'http://127.0.0.1:9123');
});

t.test('HOOK_SECRETS is a comma list with spaces trimmed and empty items dropped', async (t) => {
  const config = loadConfig({ HOOK_SECRETS: ' old-key , new-key,,  third ' });
  t.strictSame(config.hooks.get('default')?.secrets, ['old-key', 'new-key', 'third']);
  t.strictSame(loadConfig({ HOOK_SECRETS: 'only' }).hooks.get('default')?.secrets, ['only']);
});

t.test('REQUIRE_SIGNATURE accepts true, false, 1, 0, yes and no', async (t) => {
  const expected: Record<string, boolean> = { true: true, false: false, 1: true, 0: false, yes: true, no: false };
  for (const [text, value] of Object.entries(expected)) {
    t.equal(loadConfig({ REQUIRE_SIGNATURE: text }).requireSignature, value, text);
  }
});

t.test('a refused variable is named with an example and the value it had, unless the value is a secret', async (t) => {
  t.equal(
    configError({ ADMIN_URL: 'gis.example.com/arcgis/admin' }).message,
    'ADMIN_URL: an http(s) URL, e.g. https://gis.example.com/arcgis/admin (ArcGIS Online: https://services.arcgis.com/<orgId>/ArcGIS/rest/admin) (got "gis.example.com…")',
  );
  const secret = configError({ METRICS_TOKEN: 'short-secret' });
  t.equal(secret.message, 'METRICS_TOKEN: a token of at least 16 characters', 'a secret is not repeated');
});

t.test('issue 51 (N8): a refused *_URL is repeated by its scheme and host only, never its credentials, path or query', async (t) => {
  const refused: [string, string, string][] = [
    ['MIRROR_DATABASE_URL', 'mysql://u:SECRETPW1@db.internal/mirror', '"mysql://db.internal…"'],
    ['MIRROR_DATABASE_URL', 'postgresql+psycopg://u:SECRET/PW2@db.internal/mirror', '"postgresql+psycopg://…"'],
    ['ALERT_URL', 'hooks.slack.com/services/T0/B0/SLACKSECRET', '"hooks.slack.com…"'],
    ['ADMIN_URL', 'ftp://u:ADMINPW@gis.example.com/arcgis/admin?token=TOKENSECRET', '"ftp://gis.example.com…"'],
    ['TOKEN_URL', 'gis.example.com', '"gis.example.com"'],
    [
      'TRUSTED_ORIGINS',
      'https://gis2.example.com,https://u:SECRETPW3@gis3.example.com/arcgis',
      '"https://gis2.example.com,https://gis3.example.com…"',
    ],
  ];
  for (const [name, value, shown] of refused) {
    const { message } = configError({ [name]: value });
    t.ok(message.startsWith(name) && message.endsWith(`(got ${shown})`), message);
    t.notMatch(message.slice(message.lastIndexOf('(got ')), /SECRET|PW|u:|mirror|services/, `${name}: nothing past the host`);
  }
});

t.test('REQUIRE_SIGNATURE refuses any other word', async (t) => {
  const err = configError({ REQUIRE_SIGNATURE: 'maybe' });
  assertConfigError(t, err, 'REQUIRE_SIGNATURE:');
  t.equal(err.message, 'REQUIRE_SIGNATURE: true or false (got "maybe")');
});

t.test('PORT must be a port number', async (t) => {
  for (const port of ['abc', '70000', '-1', '80.5']) {
    const err = configError({ PORT: port });
    assertConfigError(t, err, 'PORT:');
    t.equal(err.message, `PORT: a port number from 0 to 65535 (got "${port}")`, port);
  }
  t.equal(loadConfig({ PORT: '65535' }).port, 65535);
  t.equal(loadConfig({ PORT: '0' }).port, 0);
});

t.test('MAX_BODY_BYTES below 1024 is refused', async (t) => {
  const err = configError({ MAX_BODY_BYTES: '1023' });
  assertConfigError(t, err, 'MAX_BODY_BYTES:');
  t.equal(err.message, 'MAX_BODY_BYTES: a whole number of bytes from 1024 to 104857600 (got "1023")');
  t.equal(loadConfig({ MAX_BODY_BYTES: '1024' }).maxBodyBytes, 1024);
});

t.test('REDIS_URL must be a redis:// or rediss:// URL', async (t) => {
  const err = configError({ REDIS_URL: 'http://x' });
  assertConfigError(t, err, 'REDIS_URL:');
  t.equal(
    err.message,
    'REDIS_URL: a redis:// or rediss:// URL, e.g. redis://redis.internal:6379',
    'its value unsaid: it may hold a password',
  );
  t.equal(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379' }).redisUrl, 'redis://127.0.0.1:6379');
  t.equal(loadConfig({ REDIS_URL: 'rediss://cache.example.com:6380/2' }).redisUrl, 'rediss://cache.example.com:6380/2');
});

t.test('LOG_FORMAT is json or pretty, and unset by default (each command decides)', async (t) => {
  t.equal(loadConfig({}).logFormat, undefined);
  t.equal(loadConfig({ LOG_FORMAT: 'pretty' }).logFormat, 'pretty');
  t.equal(loadConfig({ LOG_FORMAT: 'json' }).logFormat, 'json');
  const err = configError({ LOG_FORMAT: 'text' });
  assertConfigError(t, err, 'LOG_FORMAT:');
  t.equal(err.message, 'LOG_FORMAT: json or pretty (got "text")');
});

t.test('PUBLIC_URL loses its trailing slash', async (t) => {
  t.equal(loadConfig({ PUBLIC_URL: 'https://hooks.example.com/' }).publicUrl, 'https://hooks.example.com');
  t.equal(loadConfig({ PUBLIC_URL: 'https://hooks.example.com/gis//' }).publicUrl, 'https://hooks.example.com/gis');
  t.equal(loadConfig({ PUBLIC_URL: 'http://10.0.0.5:8080' }).publicUrl, 'http://10.0.0.5:8080');
});

t.test('PUBLIC_URL must be an http(s) URL', async (t) => {
  for (const url of ['ftp://hooks.example.com', 'not a url']) {
    const err = configError({ PUBLIC_URL: url });
    assertConfigError(t, err, 'PUBLIC_URL:');
  }
});

t.test('overrides win over the environment', async (t) => {
  const env = { PORT: '1111', HOST: '127.0.0.1', HOOK_SECRETS: 'env-key', REQUIRE_SIGNATURE: 'true' };
  const config = loadConfig(env, { PORT: '2222', HOOK_SECRETS: 'flag-key', REQUIRE_SIGNATURE: 'false' });
  t.equal(config.port, 2222);
  t.equal(config.publicUrl, 'http://127.0.0.1:2222');
  t.strictSame(config.hooks.get('default')?.secrets, ['flag-key']);
  t.equal(config.requireSignature, false);
  t.equal(config.host, '127.0.0.1', 'an override left undefined falls back to the environment');
  t.equal(loadConfig(env, { PORT: undefined }).port, 1111);
});

t.test('empty environment values count as unset', async (t) => {
  const config = loadConfig({
    PORT: '',
    HOST: '',
    REDIS_URL: '',
    GEOHOOK_PREFIX: '',
    HOOK_SECRETS: '',
    REQUIRE_SIGNATURE: '',
    SIGNATURE_HEADER: '',
    MAX_BODY_BYTES: '',
    GEOHOOK_CONFIG: '',
    PUBLIC_URL: '',
    LOG_LEVEL: '',
  });
  t.equal(config.port, 8080);
  t.equal(config.host, '0.0.0.0');
  t.equal(config.redisUrl, undefined);
  t.equal(config.prefix, 'geohook');
  t.strictSame(config.hooks.get('default')?.secrets, []);
  t.equal(config.requireSignature, true);
  t.strictSame(config.signatureHeaders, ['x-service', 'x-esrihook-signature']);
  t.equal(config.maxBodyBytes, 1_048_576);
  t.equal(config.publicUrl, 'http://127.0.0.1:8080');
  t.equal(config.logLevel, 'info');
});

t.test('SIGNATURE_HEADER names are lower-cased in order', async (t) => {
  t.strictSame(loadConfig({ SIGNATURE_HEADER: 'X-Hub-Signature, X-Service' }).signatureHeaders, ['x-hub-signature', 'x-service']);
});

t.test('the returned configuration is frozen', async (t) => {
  const config = loadConfig({ HOOK_SECRETS: 'a,b' });
  t.equal(Object.isFrozen(config), true);
  t.throws(() => {
    (config as unknown as { port: number }).port = 1;
  }, TypeError);
  t.equal(config.port, 8080);
  t.throws(() => {
    (config.signatureHeaders as string[]).push('x-other');
  }, TypeError);
  t.throws(() => {
    (config.hooks.get('default')!.secrets as string[]).push('c');
  }, TypeError);
  t.throws(() => {
    (config.hooks as Map<string, unknown>).set('extra', {});
  }, TypeError);
  t.throws(() => {
    (config.hooks as Map<string, unknown>).delete('default');
  }, TypeError);
  t.throws(() => {
    (config.hooks as Map<string, unknown>).clear();
  }, TypeError);
  t.strictSame([...config.hooks.keys()], ['default']);
  t.strictSame(config.hooks.get('default')?.secrets, ['a', 'b']);
});

t.test('GEOHOOK_CONFIG adds the hooks of a JSON file', async (t) => {
  const path = configFile(
    t,
    JSON.stringify({
      hooks: [
        { name: 'gis', secrets: ['k1', 'k2'], services: ['Tools/Buffer.GPServer'] },
        { name: 'parcels', secrets: ['p1'], changeTypes: ['FeaturesCreated'] },
      ],
      dedupRetentionSeconds: 3600,
      enqueueTimeoutMs: 500,
    }),
  );
  const config = loadConfig({ GEOHOOK_CONFIG: path });
  t.strictSame([...config.hooks.keys()], ['default', 'gis', 'parcels']);
  t.strictSame(config.hooks.get('gis'), {
    name: 'gis',
    secrets: ['k1', 'k2'],
    crc: true,
    trustedOrigins: [],
    services: ['Tools/Buffer.GPServer'],
    changeTypes: ['*'],
  });
  t.strictSame(config.hooks.get('parcels'), {
    name: 'parcels',
    secrets: ['p1'],
    crc: true,
    trustedOrigins: [],
    services: [],
    changeTypes: ['FeaturesCreated'],
  });
  t.strictSame(config.hooks.get('default')?.secrets, []);
  t.equal(config.dedupRetentionSeconds, 3600);
  t.equal(config.enqueueTimeoutMs, 500);
});

t.test('a missing GEOHOOK_CONFIG file is a one-line error', async (t) => {
  const path = join(t.testdir({}), 'absent.json');
  const err = configError({ GEOHOOK_CONFIG: path });
  assertConfigError(t, err, 'GEOHOOK_CONFIG');
  t.equal(err.message, `GEOHOOK_CONFIG: cannot read ${path} (ENOENT)`);
});

t.test('a GEOHOOK_CONFIG file that is not JSON is a one-line error', async (t) => {
  const err = configError({ GEOHOOK_CONFIG: configFile(t, '{"hooks": }') });
  assertConfigError(t, err, 'GEOHOOK_CONFIG');
});

t.test('a multi-line GEOHOOK_CONFIG file that is not JSON is a one-line error that does not echo the file', async (t) => {
  const err = configError({ GEOHOOK_CONFIG: configFile(t, '{\n  "hooks": [\n    { "name": "gis", "secrets": ["s3cret",] }\n  ]\n}\n') });
  assertConfigError(t, err, 'GEOHOOK_CONFIG');
  t.equal(err.message.includes('s3cret'), false, 'the message does not quote a secret from the file');
});

t.test('an unknown key in the GEOHOOK_CONFIG file is a one-line error', async (t) => {
  const err = configError({ GEOHOOK_CONFIG: configFile(t, JSON.stringify({ hooks: [], dedupRetention: 60 })) });
  assertConfigError(t, err, 'GEOHOOK_CONFIG');
  t.match(err.message, /dedupRetention/);
});

t.test('an unknown key inside a hook of the GEOHOOK_CONFIG file is a one-line error', async (t) => {
  const path = configFile(t, JSON.stringify({ hooks: [{ name: 'gis', secret: ['k1'] }] }));
  assertConfigError(t, configError({ GEOHOOK_CONFIG: path }), 'GEOHOOK_CONFIG');
});

t.test('a hook name defined twice is refused', async (t) => {
  const path = configFile(
    t,
    JSON.stringify({
      hooks: [
        { name: 'gis', secrets: ['a'] },
        { name: 'gis', secrets: ['b'] },
      ],
    }),
  );
  const err = configError({ GEOHOOK_CONFIG: path });
  assertConfigError(t, err, 'GEOHOOK_CONFIG');
  t.equal(err.message, 'GEOHOOK_CONFIG: hook "gis" is defined twice');
});

t.test('the default hook defined twice in the file is refused', async (t) => {
  const path = configFile(
    t,
    JSON.stringify({
      hooks: [
        { name: 'default', secrets: ['a'] },
        { name: 'default', secrets: ['b'] },
      ],
    }),
  );
  const err = configError({ GEOHOOK_CONFIG: path });
  assertConfigError(t, err, 'GEOHOOK_CONFIG');
  t.equal(err.message, 'GEOHOOK_CONFIG: hook "default" is defined twice');
});

t.test('the file may define the default hook once', async (t) => {
  const path = configFile(t, JSON.stringify({ hooks: [{ name: 'default', secrets: ['file-key'], services: ['Tools/Buffer.GPServer'] }] }));
  t.strictSame(loadConfig({ GEOHOOK_CONFIG: path }).hooks.get('default'), {
    name: 'default',
    secrets: ['file-key'],
    crc: true,
    trustedOrigins: [],
    services: ['Tools/Buffer.GPServer'],
    changeTypes: ['*'],
  });
});

t.test('HOOK_SECRETS wins over the secrets of a default hook in the file', async (t) => {
  const path = configFile(t, JSON.stringify({ hooks: [{ name: 'default', secrets: ['file-key'], services: ['Tools/Buffer.GPServer'] }] }));
  t.strictSame(loadConfig({ GEOHOOK_CONFIG: path, HOOK_SECRETS: 'env-key' }).hooks.get('default'), {
    name: 'default',
    secrets: ['env-key'],
    crc: true,
    trustedOrigins: [],
    services: ['Tools/Buffer.GPServer'],
    changeTypes: ['*'],
  });
});

t.test(
  'registration timing defaults to a 300 s interval, 16 services at once and a 1 s backoff doubling to 60 s, and the file may change it',
  async (t) => {
    const defaults = { intervalSeconds: 300, retryInitialSeconds: 1, retryMaxSeconds: 60, concurrency: 16 };
    t.strictSame(loadConfig({}).registration, defaults);
    const path = configFile(t, JSON.stringify({ registration: { intervalSeconds: 0.5, concurrency: 4 } }));
    t.strictSame(loadConfig({ GEOHOOK_CONFIG: path }).registration, { ...defaults, intervalSeconds: 0.5, concurrency: 4 });
    const bad = configFile(t, JSON.stringify({ registration: { intervalSeconds: 0 } }));
    t.throws(() => loadConfig({ GEOHOOK_CONFIG: bad }), { code: 'GEOHOOK_ERR_CONFIG', message: /registration\.intervalSeconds/ });
    const many = configFile(t, JSON.stringify({ registration: { concurrency: 1000 } }));
    t.throws(() => loadConfig({ GEOHOOK_CONFIG: many }), {
      code: 'GEOHOOK_ERR_CONFIG',
      message: /registration\.concurrency": from 1 to 256/,
    });
  },
);

t.test('services to register come from REGISTER and the file, names and patterns, each once', async (t) => {
  const admin = { ADMIN_URL: 'https://gis.example.com/arcgis/admin' };
  const path = configFile(
    t,
    JSON.stringify({ register: ['Hosted/*', 'Tools/Buffer.GPServer', '*.FeatureServer', 'Hosted/Parcel?.FeatureServer'] }),
  );
  t.strictSame(loadConfig({ ...admin, REGISTER: 'Tools/Buffer.GPServer,Roads.FeatureServer', GEOHOOK_CONFIG: path }).admin?.register, [
    'Tools/Buffer.GPServer',
    'Roads.FeatureServer',
    'Hosted/*',
    '*.FeatureServer',
    'Hosted/Parcel?.FeatureServer',
  ]);
  t.throws(() => loadConfig({ GEOHOOK_CONFIG: path }), { code: 'GEOHOOK_ERR_CONFIG', message: /ADMIN_URL: required with .*register/ });
  // configFile rewrites the one file of the test.
  const bad = configFile(t, JSON.stringify({ register: ['Hosted/Parcels'] }));
  t.throws(() => loadConfig({ ...admin, GEOHOOK_CONFIG: bad }), {
    code: 'GEOHOOK_ERR_CONFIG',
    message: /register\[0\]": services as folder\/name\.Type/,
  });
  t.throws(() => loadConfig({ ...admin, REGISTER: 'a/b/*' }), { code: 'GEOHOOK_ERR_CONFIG', message: /REGISTER/ });
  const online = { ADMIN_URL: 'https://services9.arcgis.com/AbCdEf/arcgis/rest/admin' };
  t.throws(() => loadConfig({ ...online, REGISTER: 'Hosted/*' }), {
    code: 'GEOHOOK_ERR_CONFIG',
    message: /patterns are resolved with ArcGIS Enterprise's findServices, which ArcGIS Online has not.*\(got "Hosted\/\*"\)/,
  });
});

t.test('the retry policy defaults to 5 attempts with exponential backoff from 1 s, and the file may change it', async (t) => {
  t.strictSame(loadConfig({}).retry, { attempts: 5, backoff: { type: 'exponential', delayMs: 1000, jitter: 0.2 } });
  const path = configFile(t, JSON.stringify({ retry: { attempts: 2, backoff: { type: 'fixed', delayMs: 50 } } }));
  t.strictSame(loadConfig({ GEOHOOK_CONFIG: path }).retry, { attempts: 2, backoff: { type: 'fixed', delayMs: 50, jitter: 0.2 } });
  const bad = configFile(t, JSON.stringify({ retry: { attempts: 0 } }));
  t.throws(() => loadConfig({ GEOHOOK_CONFIG: bad }), { code: 'GEOHOOK_ERR_CONFIG', message: /retry\.attempts/ });
  const linear = configFile(t, JSON.stringify({ retry: { backoff: { type: 'linear' } } }));
  t.throws(() => loadConfig({ GEOHOOK_CONFIG: linear }), { code: 'GEOHOOK_ERR_CONFIG', message: /retry\.backoff\.type/ });
});

t.test('there is no dashboard unless DASHBOARD_TOKEN or the file gives its credentials', async (t) => {
  t.equal(loadConfig({}).dashboard, undefined);
  t.strictSame(loadConfig({ DASHBOARD_TOKEN: 'a-token-of-some-length' }).dashboard, {
    auth: { token: 'a-token-of-some-length' },
    changes: 'jobs',
  });
  const basic = configFile(t, JSON.stringify({ dashboard: { username: 'ops', password: 'a long password' } }));
  t.strictSame(loadConfig({ GEOHOOK_CONFIG: basic }).dashboard, {
    auth: { username: 'ops', password: 'a long password' },
    changes: 'jobs',
  });
  t.strictSame(
    loadConfig({ GEOHOOK_CONFIG: basic, DASHBOARD_TOKEN: 'a-token-of-some-length' }).dashboard,
    { auth: { token: 'a-token-of-some-length' }, changes: 'jobs' },
    'the variable wins',
  );
  assertConfigError(t, configError({ DASHBOARD_TOKEN: 'short' }), 'DASHBOARD_TOKEN: ');
  for (const dashboard of [
    {},
    { changes: 'all' },
    { username: 'ops' },
    { password: 'a long password' },
    { token: 'x'.repeat(20), username: 'ops', password: 'a long password' },
    { username: 'ops', password: 'short' },
  ]) {
    const path = configFile(t, JSON.stringify({ dashboard }));
    t.throws(
      () => loadConfig({ GEOHOOK_CONFIG: path }),
      { code: 'GEOHOOK_ERR_CONFIG', message: /at "dashboard[".]/ },
      JSON.stringify(dashboard),
    );
  }
});

t.test('dashboard.changes: jobs by default, none or all when set, with the credentials of the file or of DASHBOARD_TOKEN', async (t) => {
  const withDashboard = (dashboard: unknown) => configFile(t, JSON.stringify({ dashboard }));
  for (const changes of ['none', 'jobs', 'all'] as const) {
    t.strictSame(
      loadConfig({ GEOHOOK_CONFIG: withDashboard({ token: 'a-token-of-some-length', changes }) }).dashboard,
      { auth: { token: 'a-token-of-some-length' }, changes },
      changes,
    );
  }
  t.strictSame(
    loadConfig({ GEOHOOK_CONFIG: withDashboard({ changes: 'none' }), DASHBOARD_TOKEN: 'a-token-of-some-length' }).dashboard,
    { auth: { token: 'a-token-of-some-length' }, changes: 'none' },
    'the token from the environment, what it may change from the file',
  );
  for (const changes of ['read', 'ALL', true, ['jobs']]) {
    t.throws(
      () => loadConfig({ GEOHOOK_CONFIG: withDashboard({ token: 'a-token-of-some-length', changes }) }),
      { code: 'GEOHOOK_ERR_CONFIG', message: /at "dashboard\.changes": none, jobs or all$/ },
      JSON.stringify(changes),
    );
  }
});

t.test('redis in GEOHOOK_CONFIG: ioredis connection options, Sentinel or Cluster, checked once', async (t) => {
  const withRedis = (redis: unknown) => ({ GEOHOOK_CONFIG: configFile(t, JSON.stringify({ redis })) });
  t.same(loadConfig({}).redis, { options: {}, cluster: undefined }, 'nothing by default');
  const sentinel = loadConfig(
    withRedis({ options: { sentinels: [{ host: 's1', port: 26379 }], name: 'mymaster', password: 'pw', tls: true } }),
  );
  t.same(sentinel.redis.options, { sentinels: [{ host: 's1', port: 26379 }], name: 'mymaster', password: 'pw', tls: {} });
  t.equal(sentinel.prefix, 'geohook', 'Sentinel keeps the usual prefix');
  const cluster = loadConfig(
    withRedis({ cluster: { nodes: [{ host: 'n1', port: 7000 }], natMap: { '10.0.0.1:7000': { host: 'n1', port: 7000 } } } }),
  );
  t.same(cluster.redis.cluster, {
    nodes: [{ host: 'n1', port: 7000 }],
    options: { natMap: { '10.0.0.1:7000': { host: 'n1', port: 7000 } } },
  });
  t.equal(cluster.prefix, '{geohook}');
  for (const [redis, message] of [
    [{ options: { keyPrefix: 'x' } }, /"redis\.options\.keyPrefix": unknown key/],
    [{ options: { maxRetriesPerRequest: 3 } }, /"redis\.options\.maxRetriesPerRequest": unknown key/],
    [{ options: { sentinels: [{ host: 's1', port: 26379 }] } }, /redis\.options\.name": sentinels and name go together/],
    [{ options: { sentinels: [], name: 'm' } }, /redis\.options\.sentinels": at least one sentinel/],
    [{ cluster: { nodes: [{ host: 'n1', port: 0 }] } }, /redis\.cluster\.nodes\[0\]\.port/],
    [{ cluster: { scaleReads: 'slave' } }, /"redis\.cluster\.scaleReads": unknown key/],
  ] as const) {
    t.throws(() => loadConfig(withRedis(redis)), { name: 'ConfigError', message }, JSON.stringify(redis));
  }
});

t.test('POLL names feature services polled every POLL_INTERVAL_SECONDS, and needs ADMIN_URL', async (t) => {
  const admin = { ADMIN_URL: 'https://gis.example.com/arcgis/admin' };
  t.match(loadConfig({ ...admin, POLL: 'Hosted/Parcels.FeatureServer, Roads.FeatureServer' }).admin, {
    poll: ['Hosted/Parcels.FeatureServer', 'Roads.FeatureServer'],
    pollIntervalSeconds: 30,
  });
  t.equal(loadConfig({ ...admin, POLL: 'Roads.FeatureServer', POLL_INTERVAL_SECONDS: '0.5' }).admin?.pollIntervalSeconds, 0.5);
  t.match(configError({ ...admin, POLL: 'Tools/Buffer.GPServer' }).message, /POLL.*feature services/);
  t.match(configError({ ...admin, POLL: 'Roads.FeatureServer', POLL_INTERVAL_SECONDS: '0' }).message, /POLL_INTERVAL_SECONDS/);
  t.match(configError({ POLL: 'Roads.FeatureServer' }).message, /ADMIN_URL: required with .*POLL/);
});

t.test('ALERT_URL is an http(s) URL; alerts are debounced 300 s unless ALERT_DEBOUNCE_SECONDS says otherwise', async (t) => {
  t.match(loadConfig({}), { alertUrl: undefined, alertDebounceSeconds: 300 });
  t.match(loadConfig({ ALERT_URL: 'https://hooks.example.com/x', ALERT_DEBOUNCE_SECONDS: '0' }), {
    alertUrl: 'https://hooks.example.com/x',
    alertDebounceSeconds: 0,
  });
  t.match(configError({ ALERT_URL: 'ftp://x' }).message, /ALERT_URL/);
});

t.test('TRUSTED_ORIGINS and hooks[].trustedOrigins take http(s) origins or URLs, without credentials, query or fragment', async (t) => {
  t.strictSame(loadConfig({ TRUSTED_ORIGINS: 'https://gis2.example.com, https://gisserver.internal:6443/arcgis' }).trustedOrigins, [
    'https://gis2.example.com',
    'https://gisserver.internal:6443/arcgis',
  ]);
  t.strictSame(loadConfig({}).trustedOrigins, []);
  for (const value of ['ftp://gis.example.com', 'https://user:pw@gis.example.com', 'https://gis.example.com/?a=1', 'gis.example.com']) {
    t.throws(
      () => loadConfig({ TRUSTED_ORIGINS: value }),
      { code: 'GEOHOOK_ERR_CONFIG', message: /^TRUSTED_ORIGINS\.0: an http\(s\) origin or URL/ },
      value,
    );
  }
  const path = configFile(
    t,
    JSON.stringify({ hooks: [{ name: 'gis', secrets: ['k'], crc: false, trustedOrigins: ['https://gis3.example.com'] }] }),
  );
  t.match(loadConfig({ GEOHOOK_CONFIG: path }).hooks.get('gis'), { crc: false, trustedOrigins: ['https://gis3.example.com'] });
  const bad = configFile(t, JSON.stringify({ hooks: [{ name: 'gis', trustedOrigins: ['javascript:alert(1)'] }] }));
  t.throws(() => loadConfig({ GEOHOOK_CONFIG: bad }), { code: 'GEOHOOK_ERR_CONFIG', message: /at "hooks\[0\]\.trustedOrigins\[0\]"/ });
});

t.test('maxConnections: 4096 by default, a whole number from 1 to 1000000 in the file', async (t) => {
  t.equal(loadConfig({}).maxConnections, 4096);
  const withCap = (maxConnections: unknown) => ({ GEOHOOK_CONFIG: configFile(t, JSON.stringify({ maxConnections })) });
  t.equal(loadConfig(withCap(200)).maxConnections, 200);
  for (const value of [0, 1.5, 2_000_000, '100']) {
    t.throws(() => loadConfig(withCap(value)), { code: 'GEOHOOK_ERR_CONFIG', message: /at "maxConnections": / }, JSON.stringify(value));
  }
});

t.test('METRICS_TOKEN: unset by default (/metrics is open), else a token of at least 16 characters', async (t) => {
  t.equal(loadConfig({}).metricsToken, undefined);
  t.equal(loadConfig({ METRICS_TOKEN: 'metrics-token-0123456789' }).metricsToken, 'metrics-token-0123456789');
  assertConfigError(t, configError({ METRICS_TOKEN: 'short' }), 'METRICS_TOKEN: a token of at least 16 characters');
});

t.test(
  'gaps are filled 16 at a time, each within 1800 s, unless BACKFILL_CONCURRENCY and BACKFILL_TIMEOUT_SECONDS say otherwise',
  async (t) => {
    t.same(loadConfig({}).backfill, { concurrency: 16, timeoutSeconds: 1800 });
    t.same(loadConfig({ BACKFILL_CONCURRENCY: '64', BACKFILL_TIMEOUT_SECONDS: '7200' }).backfill, {
      concurrency: 64,
      timeoutSeconds: 7200,
    });
    t.match(configError({ BACKFILL_CONCURRENCY: '0' }).message, /BACKFILL_CONCURRENCY/);
    t.match(configError({ BACKFILL_TIMEOUT_SECONDS: '5' }).message, /BACKFILL_TIMEOUT_SECONDS/);
  },
);

t.test('changes filters: a where clause is read at start-up, an envelope checked', async (t) => {
  const admin = { ADMIN_URL: 'https://gis.example.com/arcgis/admin' };
  const withChanges = (settings: unknown) => configFile(t, JSON.stringify({ changes: { 'Hosted/Parcels.FeatureServer': settings } }));
  const filters = {
    where: { 0: "status IN ('Open', 'Closed')" },
    within: { xmin: 0, ymin: 0, xmax: 1, ymax: 1, spatialReference: { wkid: 102100 } },
  };
  t.strictSame(
    loadConfig({ ...admin, GEOHOOK_CONFIG: withChanges(filters) }).admin?.changes.byService['Hosted/Parcels.FeatureServer'],
    filters,
  );
  for (const [settings, message] of [
    [{ where: "status = 'Open" }, /not a where clause geohook reads/],
    [{ where: 'UPPER(status) = 1' }, /not a where clause geohook reads/],
    [{ where: { first: "status = 'Open'" } }, /clauses by layer id/],
    [{ within: { xmin: 2, ymin: 0, xmax: 1, ymax: 1 } }, /xmin ≤ xmax/],
    [{ within: { xmin: 0, ymin: 0, xmax: 1, ymax: 1, spatialReference: { wkid: 2227 } } }, /4326, 3857 or 102100/],
  ] as const)
    t.throws(
      () => loadConfig({ ...admin, GEOHOOK_CONFIG: withChanges(settings) }),
      { code: 'GEOHOOK_ERR_CONFIG', message },
      JSON.stringify(settings),
    );
});
