import fc from 'fast-check';
import t from 'tap';
import { startEmulator } from '../../helpers/emulator.js';
import { replayFromEnvironment } from './helpers/replay.js';

/**
 * The emulator's admin API under random input: known and random paths, methods, parameters and
 * values (broken and deeply nested JSON, huge strings, hostile names), body encodings and tokens. Every
 * answer is HTTP 200 JSON in the admin error shape `{"status":"error","messages":[…],"code":N}` with a code
 * of docs/emulator.md#requests-tokens-and-errors (never 500), or a success that the token's role allows; never a stack trace. fast-check
 * draws a new seed each run and prints it with a failure: FUZZ_SEED replays it.
 */
replayFromEnvironment();
const RUNS = 3_000;
const ERROR_CODES = [400, 403, 404, 498, 499];

type Role = 'admin' | 'orgadmin' | 'viewer' | 'bad' | 'none';

const SERVICES = [
  'Tools/Buffer.GPServer',
  'Buffer.GPServer',
  'Tools/Geocode.GPServer',
  'Hosted/Parcels.FeatureServer',
  'Parcels.featureserver',
  'Hosted/Roads.FeatureServer',
  'Hosted/Zoning.FeatureServer',
  'Basemaps/World.MapServer',
  'Nope/Missing.GPServer',
  'Tools/Buffer',
  'tools/buffer.GPServer',
  'Tools/Buffer.GPServer.x',
  '%2e%2e/Buffer.GPServer',
];
const OPERATIONS = [
  'webhooks/create',
  'webhooks',
  'webhooks/activateAll',
  'webhooks/deactivateAll',
  'webhooks/deleteAll',
  'placementPolicy',
  'placementPolicy/edit',
];
const ON_A_WEBHOOK = ['', '/edit', '/delete', '/notificationStatus'];
const TOP_LEVEL = [
  'services/findServices',
  'services/webhooks',
  'services/webhooks/settings',
  'generateToken',
  'services',
  '',
  'services/webhooks/settings/edit',
];
const DEFINITIONS = ['Hosted/Parcels', 'Hosted/Roads', 'Hosted/Zoning', 'Parcels', 'Nope/Missing', 'Tools/Buffer'];
const PARAM_NAMES = [
  ...['name', 'hookUrl', 'active', 'changeTypes', 'signatureKey', 'contentType', 'payloadFormat', 'scheduleInfo'],
  ...['servicePlacementPolicy', 'async', 'updateDefinition', 'start', 'num', 'f', 'token', 'username', 'password', 'expiration'],
  ...['notificationAttempts', 'notificationTimeOutInSeconds', 'notificationElapsedTimeInSeconds', 'numberOfFailures', 'daysInPast'],
  ...['filterFolderName', 'filterServiceName', 'filterServiceType', 'filterServiceId', 'filterServiceProvider'],
  ...['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'],
];

const placementPolicy = (tolerations: string): string =>
  `{"placementPolicy":[{"deploymentId":"d","deploymentType":"GPServer","podPlacementPolicy":{"nodeAffinity":{},"tolerations":${tolerations}}}]}`;

/** JSON nested `depth` levels deep, bare or where the admin API expects a JSON value. */
const deepArb = fc
  .tuple(fc.oneof(fc.integer({ min: 60, max: 70 }), fc.integer({ min: 3_000, max: 20_000 })), fc.boolean(), fc.nat({ max: 4 }))
  .map(([depth, arrays, where]) => {
    const deep = arrays ? '['.repeat(depth) + ']'.repeat(depth) : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    return [deep, `[${deep}]`, `{"placementPolicy":[${deep}]}`, placementPolicy(`[${deep}]`), `{"recurrenceInfo":${deep}}`][where]!;
  });

const valueArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 40 }) },
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.json({ maxDepth: 3 }),
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      ...[
        'true',
        'false',
        'TRUE',
        ' true ',
        '',
        ' ',
        '*',
        'json',
        'pjson',
        'PJSON',
        'html',
        '-1',
        '0',
        '1',
        '5',
        '100',
        '101',
        '1e309',
        'NaN',
      ],
      ...[
        'Infinity',
        '9007199254740993',
        '0x10',
        ' 7 ',
        '1.5',
        '{',
        '[',
        '{"a":',
        '[1,',
        'null',
        '[]',
        '{}',
        '[null]',
        '[[]]',
        '"str"',
        '{"capabilities":7}',
      ],
      ...[
        'http://127.0.0.1:1/webhooks/default',
        'https://x',
        'javascript:alert(1)',
        'ftp://x',
        'http://[::1',
        '//x',
        'application/json',
        'application/x-www-form-urlencoded',
      ],
      ...[
        'FeaturesCreated,FeaturesUpdated',
        '["FeaturesCreated","nope"]',
        '[1,{"a":2}]',
        '["*"]',
        'admin',
        'admin.pass',
        'orgadmin',
        'orgadmin.pass',
        'viewer',
      ],
      ...[
        '{"capabilities":"Query,Editing,ChangeTracking","syncEnabled":false}',
        '{"name":"s","recurrenceInfo":{"interval":0}}',
        '{"recurrenceInfo":null}',
      ],
      ...['Tools', 'Buffer', 'GPServer', 'FeatureServer', 'SDS', '__proto__', 'constructor', 'toString'],
      placementPolicy('[]'),
      placementPolicy('[{"operator":"Matches"}]'),
    ),
  },
  deepArb,
  fc
    .tuple(fc.string({ minLength: 1, maxLength: 8 }), fc.integer({ min: 10_000, max: 300_000 }))
    .map(([unit, length]) => unit.repeat(Math.ceil(length / unit.length))),
);

/** Parameters an operation would take, so that successes (and the checks after them) are reached too. */
const plausibleArb = fc.record(
  {
    name: fc.string({ minLength: 1, maxLength: 20 }),
    hookUrl: fc.constantFrom('http://127.0.0.1:1/webhooks/default', 'https://example.com/hook'),
    active: fc.constantFrom('true', 'false'),
    changeTypes: fc.constantFrom('*', 'FeaturesCreated,FeaturesUpdated', '["FeaturesDeleted"]'),
    signatureKey: fc.string({ maxLength: 20 }),
    payloadFormat: fc.constantFrom('json', 'pjson'),
    scheduleInfo: fc.constantFrom('{"name":"s","recurrenceInfo":{"interval":30}}', '{}'),
    servicePlacementPolicy: fc.constant(placementPolicy('[{"key":"gpu","operator":"Exists"}]')),
    updateDefinition: fc.constantFrom('{"capabilities":"Query,Editing,ChangeTracking","syncEnabled":false}', '{"capabilities":"Query"}'),
    notificationAttempts: fc.integer({ min: 1, max: 5 }).map(String),
    daysInPast: fc.integer({ min: 1, max: 30 }).map(String),
    num: fc.integer({ min: 1, max: 100 }).map(String),
    filterServiceType: fc.constantFrom('GPServer', 'FeatureServer'),
  },
  { requiredKeys: ['name', 'hookUrl'] },
);
const randomParamsArb = (maxKeys: number) =>
  fc.dictionary(fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...PARAM_NAMES) }, fc.string({ maxLength: 12 })), valueArb, { maxKeys });

/** What a JSON-valued parameter may hold: broken, deep, huge or of the wrong type. */
const hostileJsonArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: deepArb },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '{',
      '[',
      '{"a":',
      '[1,',
      '"',
      'null',
      '[]',
      '{}',
      '[null]',
      '[[]]',
      '"str"',
      '1e400',
      '-0',
      'true',
      '{"__proto__":{"x":1}}',
      '{"recurrenceInfo":null}',
      '[{"a":[]}]',
    ),
  },
  fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value)),
  fc.integer({ min: 1_000, max: 100_000 }).map((items) => `[${'"FeaturesCreated",'.repeat(items)}1]`),
);

/** A well-formed request whose one JSON-valued parameter is hostile: each reaches the code that parses it. */
const jsonParamTargetArb = (webhookIds: readonly string[]) =>
  fc
    .tuple(
      fc.constantFrom(
        ['services/Hosted/Parcels.FeatureServer/webhooks/create', 'changeTypes'],
        ['services/Hosted/Parcels.FeatureServer/webhooks/create', 'scheduleInfo'],
        [`services/Hosted/Parcels.FeatureServer/webhooks/${webhookIds[1]}/edit`, 'changeTypes'],
        [`services/Hosted/Parcels.FeatureServer/webhooks/${webhookIds[1]}/edit`, 'scheduleInfo'],
        ['services/Tools/Buffer.GPServer/placementPolicy/edit', 'servicePlacementPolicy'],
        ['services/Hosted/Parcels/FeatureServer/updateDefinition', 'updateDefinition'],
      ),
      hostileJsonArb,
    )
    .map(([[path, name], value]) => ({
      path,
      params: { name: 'fuzz', hookUrl: 'http://127.0.0.1:1/webhooks/default', [name]: value } as Record<string, string>,
    }));

type Encoding = 'form' | 'json' | 'formRaw' | 'jsonBroken' | 'text' | 'none' | 'multipart' | 'tooLarge';

/** Paths below `{base_url}` that stay below it once resolved (`..` is resolved before routing). */
const adminPathArb = (webhookIds: readonly string[]): fc.Arbitrary<string> =>
  fc
    .oneof(
      {
        weight: 6,
        arbitrary: fc
          .tuple(fc.constantFrom(...SERVICES), fc.constantFrom(...OPERATIONS))
          .map(([service, operation]) => `services/${service}/${operation}`),
      },
      {
        weight: 4,
        arbitrary: fc
          .tuple(
            fc.constantFrom(...SERVICES),
            fc.oneof(fc.constantFrom(...webhookIds), fc.uuid(), fc.string({ maxLength: 20 }).map(encodeURIComponent)),
            fc.constantFrom(...ON_A_WEBHOOK),
          )
          .map(([service, id, tail]) => `services/${service}/webhooks/${id}${tail}`),
      },
      { weight: 3, arbitrary: fc.constantFrom(...TOP_LEVEL) },
      fc.constantFrom(...DEFINITIONS).map((service) => `services/${service}/FeatureServer/updateDefinition`),
      fc.webPath().map((path) => path.replace(/^\//, '')),
      fc
        .array(
          fc.oneof(
            fc.constantFrom('services', 'webhooks', '..', '.', '%2F', '%00', '%', 'edit', 'create', ''),
            fc.string({ maxLength: 12 }).map(encodeURIComponent),
          ),
          { maxLength: 6 },
        )
        .map((parts) => parts.join('/')),
    )
    .filter((path) => new URL(`/arcgis/admin/${path}`, 'http://emulator').pathname.startsWith('/arcgis/admin/'));

const caseArb = (webhookIds: readonly string[]) =>
  fc.record({
    method: fc.oneof(
      { weight: 16, arbitrary: fc.constant('POST' as const) },
      { weight: 3, arbitrary: fc.constant('GET' as const) },
      fc.constantFrom('PUT' as const, 'DELETE' as const, 'PATCH' as const),
    ),
    target: fc.oneof(
      {
        weight: 4,
        arbitrary: fc.record({
          path: adminPathArb(webhookIds),
          params: fc.oneof(
            randomParamsArb(7),
            fc.tuple(plausibleArb, randomParamsArb(1)).map(([plausible, random]): Record<string, string> => ({ ...plausible, ...random })),
          ),
        }),
      },
      { weight: 2, arbitrary: jsonParamTargetArb(webhookIds) },
    ),
    f: fc.oneof({ weight: 8, arbitrary: fc.constant('json') }, fc.constantFrom('pjson', 'PJSON', 'html', undefined, '')),
    role: fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom<Role>('admin', 'admin', 'orgadmin') },
      fc.constantFrom<Role>('viewer', 'bad', 'none'),
    ),
    tokenInQuery: fc.boolean(),
    encoding: fc.oneof(
      { weight: 12, arbitrary: fc.constant<Encoding>('form') },
      { weight: 2, arbitrary: fc.constant<Encoding>('json') },
      fc.constantFrom<Encoding>('formRaw', 'jsonBroken', 'text', 'none', 'multipart', 'tooLarge'),
    ),
    jsonValue: fc.oneof(
      fc.constant(undefined),
      fc.constantFrom<unknown>({ toString: 1 }, { toString: 1, valueOf: 1 }, [], ['json'], 7, null, { nested: { f: 'json' } }),
      fc.jsonValue({ maxDepth: 2 }),
    ),
    raw: fc.string({ unit: fc.constantFrom(...'ab=&%+;2F0Z \u00e9'), maxLength: 60 }),
  });
type Case = ReturnType<typeof caseArb> extends fc.Arbitrary<infer T> ? T : never;

t.test(`${RUNS.toLocaleString('en')} random admin requests get HTTP 200 admin-shape answers, never a 500 or a stack`, async (t) => {
  const emulator = await startEmulator(t);
  const tokens: Record<Role, string | undefined> = {
    admin: await emulator.token('admin'),
    orgadmin: await emulator.token('orgadmin'),
    viewer: await emulator.token('viewer'),
    bad: 'not-a-token',
    none: undefined,
  };
  // Webhooks to address by id: fuzzed edits, deletes and status reads find them (until a delete).
  const webhookIds: string[] = [];
  for (const [service, name] of [
    ['Tools/Buffer.GPServer', 'gp'],
    ['Hosted/Parcels.FeatureServer', 'fs'],
  ] as const) {
    const created = await emulator.admin(`services/${service}/webhooks/create`, {
      name,
      hookUrl: 'http://127.0.0.1:1/webhooks/default',
      signatureKey: 'k',
    });
    webhookIds.push(created.id as string);
  }

  /** The request of a case and the role whose token the emulator will see. */
  const requestOf = (c: Case) => {
    const token = tokens[c.role];
    const query = new URLSearchParams();
    const { path, params } = c.target;
    if (token !== undefined && c.tokenInQuery) query.set('token', token);
    if (c.method === 'GET' && c.f !== undefined) query.set('f', c.f);
    const fields: Record<string, string> = { ...params };
    if (c.f !== undefined) fields.f = c.f;
    if (token !== undefined && !c.tokenInQuery) fields.token = token;
    let payload: string | undefined;
    let contentType: string | undefined;
    switch (c.encoding) {
      case 'form':
        [payload, contentType] = [new URLSearchParams(fields).toString(), 'application/x-www-form-urlencoded'];
        break;
      case 'json':
        [payload, contentType] = [JSON.stringify(c.jsonValue === undefined ? fields : { ...fields, f: c.jsonValue }), 'application/json'];
        break;
      case 'formRaw':
        [payload, contentType] = [c.raw, 'application/x-www-form-urlencoded'];
        break;
      case 'jsonBroken':
        [payload, contentType] = [`{"f":"json","token":${JSON.stringify(token ?? '')},`, 'application/json'];
        break;
      case 'text':
        [payload, contentType] = [c.raw, 'text/plain'];
        break;
      case 'multipart':
        [payload, contentType] = [
          `--x\r\ncontent-disposition: form-data; name="f"\r\n\r\njson\r\n--x--`,
          'multipart/form-data; boundary=x',
        ];
        break;
      case 'tooLarge':
        [payload, contentType] = [`f=json&x=${'a'.repeat(1_100_000)}`, 'application/x-www-form-urlencoded'];
        break;
      case 'none':
        break;
    }
    const bodyCarriesToken = c.method !== 'GET' && (c.encoding === 'form' || c.encoding === 'json');
    const seenRole: Role = token === undefined ? 'none' : c.tokenInQuery || bodyCarriesToken ? c.role : 'none';
    const search = query.toString();
    const body = c.method === 'GET' ? undefined : payload;
    return {
      url: `/arcgis/admin/${path}${search === '' ? '' : `?${search}`}`,
      headers: body === undefined || contentType === undefined ? {} : { 'content-type': contentType },
      body,
      seenRole,
    };
  };

  const codes = new Map<string, number>();
  await fc.assert(
    fc.asyncProperty(caseArb(webhookIds), async (c) => {
      const request = requestOf(c);
      const response = await emulator.app.inject({
        method: c.method,
        url: request.url,
        headers: request.headers,
        ...(request.body === undefined ? {} : { payload: request.body }),
      });
      const where = `${c.method} ${request.url.slice(0, 200)} (${c.encoding}, ${c.role}): ${response.body.slice(0, 300)}`;
      if (response.statusCode !== 200) throw new Error(`HTTP ${response.statusCode} for ${where}`);
      if (!String(response.headers['content-type']).startsWith('application/json')) throw new Error(`not JSON for ${where}`);
      if (/\n\s+at |node:internal|\.[jt]s:\d+:\d+/.test(response.body)) throw new Error(`a stack trace for ${where}`);
      const answer = JSON.parse(response.body) as Record<string, unknown>;
      if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) throw new Error(`not an object for ${where}`);
      if (answer.status === 'error' || 'code' in answer || 'messages' in answer || 'error' in answer) {
        const { status, messages, code, ...rest } = answer;
        const shaped =
          status === 'error' && Array.isArray(messages) && messages.length > 0 && messages.every((message) => typeof message === 'string');
        if (!shaped || Object.keys(rest).length > 0) throw new Error(`not the admin error shape for ${where}`);
        if (!ERROR_CODES.includes(code as number)) throw new Error(`error code ${String(code)} for ${where}`);
        if (code === 403 && (request.seenRole === 'none' || request.seenRole === 'bad'))
          throw new Error(`403 without a valid token for ${where}`);
        codes.set(String(code), (codes.get(String(code)) ?? 0) + 1);
        return;
      }
      if ('status' in answer && answer.status !== 'success') throw new Error(`status ${String(answer.status)} for ${where}`);
      const operation = c.target.path.split('?')[0]!;
      const allowed: readonly Role[] =
        operation === 'generateToken'
          ? ['admin', 'orgadmin', 'viewer', 'bad', 'none']
          : /^services\/webhooks\/settings\/?$/.test(operation)
            ? ['orgadmin']
            : ['admin', 'orgadmin'];
      if (!allowed.includes(request.seenRole)) throw new Error(`a success for role ${request.seenRole} at ${where}`);
      codes.set('success', (codes.get('success') ?? 0) + 1);
    }),
    { numRuns: RUNS },
  );
  t.comment(`answers: ${JSON.stringify(Object.fromEntries([...codes].sort()))}`);

  const after = await emulator.admin('services/Tools/Buffer.GPServer/webhooks/create', {
    name: 'after',
    hookUrl: 'http://127.0.0.1:1/webhooks/default',
  });
  t.equal(after.status, 'success', 'a webhook is still created afterwards');
  t.ok(Array.isArray((await emulator.admin('services/webhooks')).webhooks), 'and every stored webhook still lists');
  t.equal((await fetch(`${emulator.url}/emulator/webhooks`)).status, 200, 'the control endpoints still serve');
});
