import crypto from 'node:crypto';
import { once } from 'node:events';
import { syncBuiltinESMExports } from 'node:module';
import { connect } from 'node:net';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/load-config.js';
import { createSession, isAuthorized } from '../../src/dashboard/session.js';
import { sign } from '../../src/signature/sign.js';
import { SubscriptionRegistry } from '../../src/subscriptions/subscription-registry.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { fixture } from '../helpers/paths.js';
import { configFile, startReceiver, TEST_KEY, type TestReceiver } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { changeUpdated, SECRET_A } from '../helpers/relay-events.js';

const TOKEN = 'dashboard-token-0123456789';
const USER = 'ops';
const PASSWORD = 'correct-horse-battery';
const BEARER = { authorization: `Bearer ${TOKEN}` };
const BASIC = { authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}` };

const redis = await startRedis(t);

interface Answer {
  status: number;
  headers: Headers;
  body: string;
}

/** GETs `path` without following redirects, and reads the whole body (an unread one keeps the connection busy). */
async function get(receiver: TestReceiver, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(`${receiver.url}${path}`, { headers, redirect: 'manual' });
  return { status: response.status, headers: response.headers, body: await response.text() };
}

/** The path of the board's main script, as its page links it. */
async function mainScript(receiver: TestReceiver, headers: Record<string, string>): Promise<string> {
  const page = (await get(receiver, '/ui/', headers)).body;
  const script = /src="(static\/js\/main\.[\w.]+\.js)"/.exec(page)?.[1];
  if (script === undefined) throw new Error('no main script in the board page');
  return `/ui/${script}`;
}

/** Writes `request` as it is on a new connection; resolves to everything the receiver answered. */
async function rawAnswer(receiver: TestReceiver, request: string): Promise<string> {
  const socket = connect(Number(new URL(receiver.url).port), '127.0.0.1');
  let answer = '';
  socket.on('data', (data: Buffer) => (answer += data.toString('latin1')));
  socket.write(request);
  await once(socket, 'close');
  return answer;
}

async function login(receiver: TestReceiver, token: string, cookie?: string): Promise<Answer> {
  const response = await fetch(`${receiver.url}/ui/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie === undefined ? {} : { cookie }) },
    body: new URLSearchParams({ token }).toString(),
    redirect: 'manual',
  });
  return { status: response.status, headers: response.headers, body: await response.text() };
}

/** Enqueues the GP fixture and lets a worker fail it once (`retry.attempts` is 1); resolves to its job id. */
async function failedJob(t: Test, receiver: TestReceiver): Promise<string> {
  const body = fixture('enterprise-gp-succeeded.json');
  t.equal((await receiver.post(body, { 'x-service': sign(TEST_KEY, body) })).status, 202);
  const worker = new Worker(
    'gp-events',
    async () => {
      throw new Error('consumer broke');
    },
    { connection: { url: redis.url }, prefix: receiver.prefix },
  );
  const jobId = await new Promise<string | undefined>((resolve) => worker.once('failed', (job) => resolve(job?.id)));
  await worker.close();
  return jobId!;
}

const tokenConfig = (t: Test): Record<string, string> => ({
  GEOHOOK_CONFIG: configFile(t, { dashboard: { token: TOKEN }, retry: { attempts: 1 } }),
});

t.test('there is no dashboard unless credentials are configured: /ui is 404', async (t) => {
  const receiver = await startReceiver(t, redis);
  for (const path of ['/ui', '/ui/', '/ui/login', '/ui/api/queues', '/ui/static/images/logo.svg']) {
    const response = await get(receiver, path, BEARER);
    t.equal(response.status, 404, path);
    t.match(JSON.parse(response.body), { code: 'GEOHOOK_ERR_NOT_FOUND' });
  }
});

t.test('token mode: the bearer token opens pages, static assets and the API', async (t) => {
  const receiver = await startReceiver(t, redis, { DASHBOARD_TOKEN: TOKEN });
  for (const path of ['/ui', '/ui/', '/ui/queue/gp-events', '/ui/static/images/logo.svg', '/ui/api/redis/stats']) {
    t.equal((await get(receiver, path, BEARER)).status, 200, path);
  }
  const script = await get(receiver, await mainScript(receiver, BEARER), BEARER);
  t.equal(script.status, 200, 'the board script loads');
  t.match(script.headers.get('content-type'), /javascript/);
  const queues = JSON.parse((await get(receiver, '/ui/api/queues', BEARER)).body) as { queues: Array<{ name: string }> };
  t.same(queues.queues.map((queue) => queue.name).sort(), ['backfill', 'feature-events', 'gp-events', 'unknown-events']);
});

t.test('token mode: without credentials pages redirect to the login page, assets and the API are 401', async (t) => {
  const receiver = await startReceiver(t, redis, { DASHBOARD_TOKEN: TOKEN });
  const script = await mainScript(receiver, BEARER);
  for (const path of ['/ui', '/ui/', '/ui/queue/gp-events']) {
    const response = await get(receiver, path);
    t.equal(response.status, 302, path);
    t.equal(response.headers.get('location'), '/ui/login');
  }
  for (const path of ['/ui/api/queues', '/ui/api/queues/gp-events/workers', '/ui/static/images/logo.svg', script]) {
    const response = await get(receiver, path);
    t.equal(response.status, 401, path);
    t.equal(response.headers.get('www-authenticate'), 'Bearer realm="geohook"');
    t.match(JSON.parse(response.body), { statusCode: 401, code: 'GEOHOOK_ERR_DASHBOARD_AUTH', error: 'Unauthorized' });
  }
});

t.test('token mode: a wrong bearer token is 401, also next to a valid session cookie', async (t) => {
  const receiver = await startReceiver(t, redis, { DASHBOARD_TOKEN: TOKEN });
  const cookie = `geohook_dashboard=${createSession(TOKEN, Math.floor(Date.now() / 1000) + 60)}`;
  t.equal((await get(receiver, '/ui/api/queues', { cookie })).status, 200, 'the cookie alone is enough');
  for (const authorization of [
    `Bearer ${TOKEN}x`,
    `Bearer ${TOKEN.slice(0, -1)}`,
    'Bearer x',
    `Basic ${Buffer.from(`u:${TOKEN}`).toString('base64')}`,
  ]) {
    const response = await get(receiver, '/ui/api/queues', { authorization, cookie: authorization.startsWith('Bearer') ? cookie : '' });
    t.equal(response.status, 401, authorization.slice(0, 10));
    t.match(JSON.parse(response.body), { code: 'GEOHOOK_ERR_DASHBOARD_AUTH' });
  }
});

t.test('login page: the right token sets an HttpOnly SameSite=Strict cookie holding an HMAC that opens the board', async (t) => {
  const receiver = await startReceiver(t, redis, { DASHBOARD_TOKEN: TOKEN });
  const form = await get(receiver, '/ui/login');
  t.equal(form.status, 200);
  t.match(form.headers.get('content-type'), /^text\/html/);
  t.match(form.body, /<form method="post" action="login">[\s\S]*name="token" type="password"/);

  const refused = await login(receiver, `${TOKEN}-wrong`);
  t.equal(refused.status, 401, 'a wrong token is 401');
  t.equal(refused.headers.get('set-cookie'), null, 'and sets no cookie');
  t.match(
    refused.body,
    /not the dashboard token\. <code>geohook up<\/code> makes a new one each time it starts: open the dashboard link it printed last/,
  );

  const accepted = await login(receiver, TOKEN);
  t.equal(accepted.status, 303);
  t.equal(accepted.headers.get('location'), '/ui/services', 'the services page is the first page');
  const setCookie = accepted.headers.get('set-cookie') ?? '';
  t.match(
    setCookie,
    /^geohook_dashboard=\d+\.[\w-]{43}; Path=\/ui; Max-Age=28800; HttpOnly; SameSite=Strict, geohook_device=\d+\.[\w-]{43}; Path=\/ui; Max-Age=2592000; HttpOnly; SameSite=Strict$/,
    'a session, and the mark of a known browser',
  );
  t.notOk(setCookie.includes(TOKEN), 'the cookie does not hold the token');
  const cookie = setCookie.split(';')[0]!;
  t.equal((await get(receiver, '/ui/', { cookie })).status, 200, 'the cookie opens the page');
  t.equal((await get(receiver, '/ui/api/queues', { cookie })).status, 200, 'and the API');
  t.equal((await get(receiver, await mainScript(receiver, { cookie }), { cookie })).status, 200, 'and the assets');
});

t.test('a sign-in link (/ui/login?token=…) signs in like the form; a wrong or repeated token is refused', async (t) => {
  const receiver = await startReceiver(t, redis, { DASHBOARD_TOKEN: TOKEN });
  const accepted = await fetch(`${receiver.url}/ui/login?token=${TOKEN}`, { redirect: 'manual' });
  t.equal(accepted.status, 303);
  t.equal(accepted.headers.get('location'), '/ui/services', 'the services page is the first page');
  const cookie = (accepted.headers.get('set-cookie') ?? '').split(';')[0]!;
  t.equal((await get(receiver, '/ui/', { cookie })).status, 200, 'the cookie opens the board');
  for (const query of [`token=${TOKEN}-wrong`, 'token=', `token=${TOKEN}&token=${TOKEN}`]) {
    const refused = await fetch(`${receiver.url}/ui/login?${query}`, { redirect: 'manual' });
    t.equal(refused.status, 401, `${query.slice(0, 30)} is refused`);
    t.equal(refused.headers.get('set-cookie'), null);
  }
});

t.test('logout clears the session cookie; behind TLS (PUBLIC_URL https) the cookies are Secure', async (t) => {
  const receiver = await startReceiver(t, redis, { DASHBOARD_TOKEN: TOKEN });
  for (const method of ['GET', 'POST']) {
    const response = await fetch(`${receiver.url}/ui/logout`, { method, redirect: 'manual' });
    t.equal(response.status, 200, `${method} /ui/logout`);
    t.equal(response.headers.get('set-cookie'), 'geohook_dashboard=; Path=/ui; Max-Age=0; HttpOnly; SameSite=Strict');
    t.match(await response.text(), /Signed out/);
  }
  const behindTls = await startReceiver(t, redis, { DASHBOARD_TOKEN: TOKEN, PUBLIC_URL: 'https://hooks.example.com' });
  t.match((await login(behindTls, TOKEN)).headers.get('set-cookie'), /; HttpOnly; SameSite=Strict; Secure$/);
  const cleared = await fetch(`${behindTls.url}/ui/logout`);
  t.match(cleared.headers.get('set-cookie'), /^geohook_dashboard=; .*; Secure$/);
  await cleared.text();
});

t.test('an expired, forged or tampered session cookie is refused', async (t) => {
  const receiver = await startReceiver(t, redis, { DASHBOARD_TOKEN: TOKEN });
  const now = Math.floor(Date.now() / 1000);
  const valid = createSession(TOKEN, now + 60);
  const cookies = {
    expired: createSession(TOKEN, now - 1),
    'made with another token': createSession(`${TOKEN}-other`, now + 60),
    'expiry changed': `${now + 3600}${valid.slice(valid.indexOf('.'))}`,
    'the token itself': TOKEN,
  };
  for (const [name, value] of Object.entries(cookies)) {
    t.equal((await get(receiver, '/ui/api/queues', { cookie: `geohook_dashboard=${value}` })).status, 401, name);
  }
});

t.test('retrying a job needs credentials and, with a cookie, a request from the board itself', async (t) => {
  const receiver = await startReceiver(t, redis, tokenConfig(t));
  const jobId = await failedJob(t, receiver);
  const queue = receiver.app.eventQueue.queue('gp-events');
  const retry = async (headers: Record<string, string>): Promise<Answer> => {
    const response = await fetch(`${receiver.url}/ui/api/queues/gp-events/${jobId}/retry`, { method: 'PUT', headers });
    return { status: response.status, headers: response.headers, body: await response.text() };
  };
  const cookie = `geohook_dashboard=${createSession(TOKEN, Math.floor(Date.now() / 1000) + 60)}`;

  t.equal((await retry({})).status, 401, 'no credentials');
  t.equal((await retry({ authorization: 'Bearer not-the-token' })).status, 401, 'wrong token');
  const crossSite = await retry({ cookie, 'sec-fetch-site': 'same-site' });
  t.equal(crossSite.status, 401, 'a cookie sent by a page of another origin');
  t.match(JSON.parse(crossSite.body), { code: 'GEOHOOK_ERR_DASHBOARD_AUTH' });
  t.equal(crossSite.headers.get('www-authenticate'), null, 'the credentials were fine: no challenge');
  t.equal(await queue.getJobState(jobId), 'failed', 'the refused calls changed nothing');

  t.equal((await retry({ cookie, 'sec-fetch-site': 'same-origin' })).status, 204, 'a cookie from the board itself');
  t.not(await queue.getJobState(jobId), 'failed');
});

t.test('basic mode: the user name and password open the board; anything else is 401 with a Basic challenge', async (t) => {
  const basicConfig = { GEOHOOK_CONFIG: configFile(t, { dashboard: { username: USER, password: PASSWORD } }) };
  const receiver = await startReceiver(t, redis, basicConfig);
  const script = await mainScript(receiver, BASIC);
  for (const path of ['/ui/', '/ui/api/queues', script]) t.equal((await get(receiver, path, BASIC)).status, 200, path);
  const wrong = {
    none: {},
    'wrong password': { authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}x`).toString('base64')}` },
    'wrong user': { authorization: `Basic ${Buffer.from(`${USER}x:${PASSWORD}`).toString('base64')}` },
    'no colon': { authorization: `Basic ${Buffer.from(`${USER}${PASSWORD}`).toString('base64')}` },
    'password as bearer': { authorization: `Bearer ${PASSWORD}` },
  };
  for (const [name, headers] of Object.entries(wrong)) {
    // A receiver each: more wrong credentials from one address than the free ones would be slowed down.
    const fresh = await startReceiver(t, redis, basicConfig);
    for (const path of ['/ui/', '/ui/api/queues', script]) {
      const response = await get(fresh, path, headers);
      t.equal(response.status, 401, `${name}: ${path}`);
      t.equal(response.headers.get('www-authenticate'), 'Basic realm="geohook", charset="UTF-8"');
      t.match(JSON.parse(response.body), { code: 'GEOHOOK_ERR_DASHBOARD_AUTH' });
    }
  }
  t.equal((await login(receiver, PASSWORD)).status, 404, 'basic mode has no login page');
});

t.test('a dashboard started while Redis is down answers 503 on its API until Redis comes up', async (t) => {
  const down = await startRedis(t);
  await down.stop();
  const app = await buildApp({
    config: loadConfig({ REDIS_URL: down.url, LOG_LEVEL: 'silent', GEOHOOK_PREFIX: 'dashdown', DASHBOARD_TOKEN: TOKEN }),
  });
  t.teardown(() => app.close());
  t.equal((await app.inject({ url: '/ui/', headers: BEARER })).statusCode, 200, 'the page is served');
  const early = await app.inject({ url: '/ui/api/queues', headers: BEARER });
  t.equal(early.statusCode, 503);
  t.match(early.json(), { code: 'GEOHOOK_ERR_QUEUE_UNAVAILABLE' });
  t.ok(Number(early.headers['retry-after']) > 0);
  await down.start();
  await app.eventQueue.ready();
  const late = await app.inject({ url: '/ui/api/queues', headers: BEARER });
  t.equal(late.statusCode, 200);
  t.equal(late.json().queues.length, 4, 'the three event queues and the backfill queue');
});

t.test('every secret comparison goes through timingSafeEqual on equal-length digests', async (t) => {
  const calls: Array<[number, number]> = [];
  // The module's named import of timingSafeEqual is a live binding to node:crypto's export: replace the export.
  const original = crypto.timingSafeEqual;
  crypto.timingSafeEqual = (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
    calls.push([a.byteLength, b.byteLength]);
    return original(a, b);
  };
  syncBuiltinESMExports();
  t.teardown(() => {
    crypto.timingSafeEqual = original;
    syncBuiltinESMExports();
  });
  const basic = (user: string, password: string): { authorization: string } => ({
    authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
  });
  const cases: Array<[Parameters<typeof isAuthorized>[0], Record<string, string>, boolean, number]> = [
    [{ token: TOKEN }, BEARER, true, 1],
    [{ token: TOKEN }, { authorization: 'Bearer short' }, false, 1],
    [{ token: TOKEN }, { authorization: `Bearer ${TOKEN}${'x'.repeat(100)}` }, false, 1],
    [{ token: TOKEN }, { cookie: `geohook_dashboard=${createSession(TOKEN, 4_000_000_000)}` }, true, 1],
    [{ token: TOKEN }, { cookie: `geohook_dashboard=${createSession('another-token-123', 4_000_000_000)}` }, false, 1],
    [{ username: USER, password: PASSWORD }, BASIC, true, 2],
    [{ username: USER, password: PASSWORD }, basic('x', PASSWORD), false, 2],
    [{ username: USER, password: PASSWORD }, basic(USER, 'x'), false, 2],
  ];
  for (const [config, headers, expected, comparisons] of cases) {
    calls.length = 0;
    t.equal(isAuthorized(config, headers), expected, JSON.stringify(headers).slice(0, 40));
    t.same(
      calls,
      Array.from({ length: comparisons }, () => [32, 32]),
      'compared as two SHA-256 digests, user and password both',
    );
  }
});

t.test('the token and the session cookie never reach a log line', async (t) => {
  const { logger: loggerInstance, lines } = capturingLogger();
  const receiver = await startReceiver(t, redis, { DASHBOARD_TOKEN: TOKEN }, { loggerInstance });
  const accepted = await login(receiver, TOKEN);
  await login(receiver, `${TOKEN}-wrong`);
  await fetch(`${receiver.url}/ui/login?token=${TOKEN}`, { redirect: 'manual' });
  // Spellings of the sign-in link that the router reads as `?token=` too (L5).
  for (const query of [`?%74oken=${TOKEN}`, `?TOK%45N=${TOKEN}&token=${TOKEN}`, `?tok%65n=${TOKEN}`]) {
    t.equal((await fetch(`${receiver.url}/ui/login${query}`, { redirect: 'manual' })).status, 303, query);
  }
  t.match(
    await rawAnswer(receiver, `GET /ui/login#token=${TOKEN} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`),
    /^HTTP\/1\.1 303 /,
    '#token=',
  );
  const cookie = (accepted.headers.get('set-cookie') ?? '').split(';')[0]!;
  t.equal((await get(receiver, '/ui/api/queues', { cookie })).status, 200);
  t.equal((await get(receiver, '/ui/api/queues', BEARER)).status, 200);
  const log = lines.join('\n');
  t.match(log, /dashboard login refused/, 'the log was captured');
  for (const secret of [TOKEN, cookie.split('=')[1]!]) t.notOk(log.includes(secret), `the log does not contain ${secret.slice(0, 12)}…`);
});

t.test('every /ui answer forbids framing and sniffing: pages, redirects, assets, the API, errors, the two views', async (t) => {
  const receiver = await startReceiver(t, redis, { DASHBOARD_TOKEN: TOKEN });
  const script = await mainScript(receiver, BEARER);
  const answers: Record<string, Answer> = {
    'the login page': await get(receiver, '/ui/login'),
    'a refused login': await login(receiver, `${TOKEN}-wrong`),
    'a login': await login(receiver, TOKEN),
    'the logout page': await get(receiver, '/ui/logout'),
    'the board': await get(receiver, '/ui/', BEARER),
    'a queue page': await get(receiver, '/ui/queue/gp-events', BEARER),
    'the redirect of an anonymous visit': await get(receiver, '/ui/queue/gp-events'),
    'a static asset': await get(receiver, script, BEARER),
    'the API': await get(receiver, '/ui/api/queues', BEARER),
    'a refused API call': await get(receiver, '/ui/api/queues'),
    'the services view': await get(receiver, '/ui/services', BEARER),
    'the changes view': await get(receiver, '/ui/changes', BEARER),
    'an unknown page': await get(receiver, '/ui/no-such-page/x', BEARER),
  };
  t.equal(answers['an unknown page']!.status, 404);
  for (const [name, answer] of Object.entries(answers)) {
    t.equal(answer.headers.get('x-frame-options'), 'DENY', `${name} (${answer.status}): X-Frame-Options`);
    t.equal(answer.headers.get('x-content-type-options'), 'nosniff', `${name}: nosniff`);
    t.match(answer.headers.get('content-security-policy'), /(^|; )frame-ancestors 'none'($|;)/, `${name}: frame-ancestors`);
  }
  for (const view of ['the services view', 'the changes view']) {
    t.match(answers[view]!.headers.get('content-security-policy'), /^default-src 'none'; /, `${view} keeps its own policy`);
  }
  t.equal((await fetch(`${receiver.url}/healthz`)).headers.get('x-frame-options'), null, 'the receiver outside /ui is left alone');
});

/** Calls the board's API with the bearer token and a JSON body (every change route is sent one). */
async function call(receiver: TestReceiver, method: string, path: string, body: unknown = {}): Promise<Answer> {
  const response = await fetch(`${receiver.url}/ui/api/queues${path}`, {
    method,
    headers: { ...BEARER, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: await response.text() };
}

const changesConfig = (t: Test, changes?: string): Record<string, string> => ({
  GEOHOOK_CONFIG: configFile(t, { dashboard: { token: TOKEN, ...(changes === undefined ? {} : { changes }) }, retry: { attempts: 1 } }),
});

/** The board's calls that change more than a job's state, each with the body it expects. */
const otherChanges = (jobId: string): Array<[string, string, unknown?]> => [
  ['POST', '/gp-events/add', { name: 'planted', data: { changesUrl: 'http://attacker.example/x' } }],
  ['PATCH', `/gp-events/${jobId}/update-data`, { jobData: { tampered: true } }],
  ['PATCH', `/gp-events/${jobId}/delay`, { delay: 1000 }],
  ['PATCH', `/gp-events/${jobId}/priority`, { priority: 1 }],
  ['PUT', `/gp-events/${jobId}/remove-unprocessed-children`],
  ['PUT', '/gp-events/empty'],
  ['PUT', '/gp-events/obliterate', { force: true }],
  ['PUT', '/gp-events/pause'],
  ['PUT', '/gp-events/resume'],
  ['PUT', '/pause'],
  ['PUT', '/resume'],
  ['PUT', '/gp-events/concurrency', { concurrency: 1 }],
  ['PUT', '/gp-events/rate-limit', { max: 1, duration: 1000 }],
  ['PUT', '/gp-events/rate-limit/release'],
  ['PUT', '/gp-events/job-schedulers/s1/remove'],
  ['PATCH', '/gp-events/job-schedulers/s1', { pattern: '* * * * *' }],
  ['PUT', '/gp-events/job-schedulers/s1/run'],
  // Spellings of the add route: the route Fastify matched decides, not the text of the path.
  ['POST', '/gp-events/%61dd', { name: 'planted', data: {} }],
  ['POST', '/gp-events//add', { name: 'planted', data: {} }],
];

t.test('by default the dashboard retries, removes and promotes jobs, and refuses every other change with 403 (L4)', async (t) => {
  const receiver = await startReceiver(t, redis, changesConfig(t));
  const queue = receiver.app.eventQueue.queue('gp-events');
  const jobId = await failedJob(t, receiver);
  const dataBefore = (await queue.getJob(jobId))!.data as unknown;
  for (const [method, path, body] of otherChanges(jobId)) {
    const answer = await call(receiver, method, path, body);
    const code = (JSON.parse(answer.body) as { code?: string }).code;
    if (/%|\/\//.test(path)) t.match(code, /^GEOHOOK_ERR_(DASHBOARD_READ_ONLY|NOT_FOUND)$/, `${method} ${path}: ${answer.status} ${code}`);
    else t.match({ status: answer.status, code }, { status: 403, code: 'GEOHOOK_ERR_DASHBOARD_READ_ONLY' }, `${method} ${path}`);
  }
  t.same((await queue.getJob(jobId))!.data, dataBefore, 'the job data is untouched');
  t.same(await queue.getJobCounts('wait', 'delayed', 'failed'), { wait: 0, delayed: 0, failed: 1 }, 'nothing was added or removed');
  t.equal(await queue.isPaused(), false, 'nor paused');

  t.equal((await call(receiver, 'PUT', `/gp-events/${jobId}/retry`)).status, 204, 'a job is retried');
  t.not(await queue.getJobState(jobId), 'failed');
  t.equal((await call(receiver, 'PUT', `/gp-events/${jobId}/clean`)).status, 204, 'a job is removed');
  t.equal(await queue.getJob(jobId), undefined);
  for (const path of ['/gp-events/retry/failed', '/gp-events/clean/completed', '/gp-events/promote']) {
    t.equal((await call(receiver, 'PUT', path)).status, 200, `every job of a state: PUT ${path}`);
  }
  t.equal((await call(receiver, 'PUT', `/gp-events/${jobId}/promote`)).status, 404, 'promoting a job that is gone reaches the board');
});

t.test('dashboard.changes "none": a read-only board, Bull Board told so, every change refused with 403', async (t) => {
  const receiver = await startReceiver(t, redis, changesConfig(t, 'none'));
  const queue = receiver.app.eventQueue.queue('gp-events');
  const jobId = await failedJob(t, receiver);
  const queues = JSON.parse((await get(receiver, '/ui/api/queues', BEARER)).body) as { queues: Array<{ readOnlyMode: boolean }> };
  t.same(
    queues.queues.map((entry) => entry.readOnlyMode),
    [true, true, true, true],
    'every queue is read-only to the board, which then shows no action',
  );
  for (const [method, path] of [
    ['PUT', `/gp-events/${jobId}/retry`],
    ['PUT', `/gp-events/${jobId}/clean`],
    ['PUT', '/gp-events/retry/failed'],
    ['PUT', '/gp-events/clean/failed'],
    ['PUT', '/gp-events/promote'],
    ...otherChanges(jobId).slice(0, 3),
  ] as const) {
    const answer = await call(receiver, method, path);
    t.equal(answer.status, 403, `${method} ${path}`);
    t.match(JSON.parse(answer.body), { code: 'GEOHOOK_ERR_DASHBOARD_READ_ONLY' });
  }
  t.equal(await queue.getJobState(jobId), 'failed', 'the job is where it was');
  t.equal((await get(receiver, `/ui/api/queues/gp-events/${jobId}`, BEARER)).status, 200, 'reading still works');
});

t.test('dashboard.changes "all": every change of Bull Board, adding and editing jobs included', async (t) => {
  const receiver = await startReceiver(t, redis, changesConfig(t, 'all'));
  const queue = receiver.app.eventQueue.queue('gp-events');
  const jobId = await failedJob(t, receiver);
  t.equal((await call(receiver, 'POST', '/gp-events/add', { name: 'added', data: { v: 1 } })).status, 200, 'a job is added');
  t.equal((await queue.getJobs(['wait'])).length, 1);
  t.equal((await call(receiver, 'PATCH', `/gp-events/${jobId}/update-data`, { jobData: { v: 2 } })).status, 200, 'its data is edited');
  t.same((await queue.getJob(jobId))!.data, { v: 2 });
  t.equal((await call(receiver, 'PUT', '/gp-events/pause')).status, 200, 'the queue is paused');
  t.equal(await queue.isPaused(), true);
});

t.test(
  'wrong tokens from one address are slowed down: after ten, 429 with Retry-After, unchecked, except for a browser that signed in before (L6, I1)',
  async (t) => {
    const receiver = await startReceiver(t, redis, { DASHBOARD_TOKEN: TOKEN });
    const cookie = `geohook_dashboard=${createSession(TOKEN, Math.floor(Date.now() / 1000) + 60)}`;
    const before = await login(receiver, TOKEN);
    t.equal(before.status, 303, 'an administrator signs in before the guessing starts');
    const device = /geohook_device=[^;]+/.exec(before.headers.get('set-cookie') ?? '')?.[0];
    t.ok(device, 'and the browser is marked as known');
    t.match(before.headers.get('set-cookie'), /geohook_device=[^;]+; Path=\/ui; Max-Age=2592000; HttpOnly; SameSite=Strict/);
    for (let attempt = 1; attempt <= 5; attempt += 1)
      t.equal((await login(receiver, `${TOKEN}-${attempt}`)).status, 401, `login ${attempt}`);
    for (let attempt = 6; attempt <= 10; attempt += 1) {
      t.equal((await get(receiver, '/ui/api/queues', { authorization: `Bearer ${TOKEN}-${attempt}` })).status, 401, `bearer ${attempt}`);
    }
    t.equal((await login(receiver, `${TOKEN}-11`)).status, 401, 'the eleventh is refused, and makes the address wait');

    const page = await login(receiver, TOKEN);
    t.equal(page.status, 429, 'the login page: the right token from a new browser is not even checked (the wait tells nothing)');
    t.equal(page.headers.get('retry-after'), '1');
    t.match(page.body, /data-code="GEOHOOK_ERR_DASHBOARD_RATE_LIMITED"/);
    t.equal(page.headers.get('set-cookie'), null, 'no session');
    const link = await fetch(`${receiver.url}/ui/login?token=${TOKEN}`, { redirect: 'manual' });
    t.equal(link.status, 429, 'the sign-in link');
    await link.text();
    const api = await get(receiver, '/ui/api/queues', BEARER);
    t.equal(api.status, 429, 'the bearer token on the API');
    t.equal(api.headers.get('retry-after'), '1');
    t.match(JSON.parse(api.body), { statusCode: 429, code: 'GEOHOOK_ERR_DASHBOARD_RATE_LIMITED' });
    t.equal((await get(receiver, '/ui/api/queues', { cookie })).status, 200, 'a session opened before goes on');

    // Issue 51 (I1): a guesser behind the same proxy locks out no administrator whose browser signed in before.
    const forged = `geohook_device=${Math.floor(Date.now() / 1000) + 60}.${'A'.repeat(43)}`;
    t.equal((await login(receiver, TOKEN, forged)).status, 429, 'a forged device cookie spares nothing');
    const known = await login(receiver, TOKEN, device);
    t.equal(known.status, 303, 'the known browser signs in while the address waits');
    t.equal((await login(receiver, `${TOKEN}-12`, device)).status, 401, 'and its wrong token is checked, not waited');
    t.equal((await get(receiver, '/ui/api/queues', { ...BEARER, cookie: device! })).status, 200, 'the bearer token from it');
    t.equal((await login(receiver, `${TOKEN}-13`)).status, 429, 'the successes did not forget the failures');
  },
);

t.test('basic mode: wrong passwords are slowed down the same way; a browser that signed in before is not (I1)', async (t) => {
  const receiver = await startReceiver(t, redis, { GEOHOOK_CONFIG: configFile(t, { dashboard: { username: USER, password: PASSWORD } }) });
  const first = await fetch(`${receiver.url}/ui/api/queues`, { headers: BASIC });
  t.equal(first.status, 200);
  await first.text();
  const device = /geohook_device=[^;]+/.exec(first.headers.get('set-cookie') ?? '')?.[0];
  t.ok(device, 'the browser that signed in is marked as known');
  const wrong = { authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}x`).toString('base64')}` };
  for (let attempt = 1; attempt <= 11; attempt += 1)
    t.equal((await get(receiver, '/ui/api/queues', wrong)).status, 401, `attempt ${attempt}`);
  const refused = await get(receiver, '/ui/api/queues', BASIC);
  t.equal(refused.status, 429, 'the right password from a new client waits, unchecked');
  t.match(JSON.parse(refused.body), { code: 'GEOHOOK_ERR_DASHBOARD_RATE_LIMITED' });
  t.equal((await get(receiver, '/ui/api/queues', { ...BASIC, cookie: device! })).status, 200, 'the known browser gets in');
  t.equal((await get(receiver, '/ui/api/queues')).status, 401, 'a request without credentials is no guess: a plain 401');
});

t.test('the services page lists the recent events, of one service when asked; the board fetches nothing from outside', async (t) => {
  const receiver = await startReceiver(t, redis, { DASHBOARD_TOKEN: TOKEN });
  for (const name of ['enterprise-gp-succeeded.json', 'enterprise-feature-created.json']) {
    const body = fixture(name);
    t.equal((await receiver.post(body, { 'x-service': sign(TEST_KEY, body) })).status, 202, name);
  }
  const events = (body: string): string[] =>
    [...body.matchAll(/<tr data-event="[0-9a-f]{64}"><td>[^<]*<\/td><td>([^<]+)<\/td>/g)].map((match) => match[1]!);
  const all = await get(receiver, '/ui/services', BEARER);
  t.equal(all.status, 200);
  t.same(events(all.body).sort(), ['feature.FeaturesCreated', 'gp.job.succeeded'], 'every event, newest first');
  const one = await get(receiver, `/ui/services?service=${encodeURIComponent('Tools/Buffer.GPServer')}`, BEARER);
  t.same(events(one.body), ['gp.job.succeeded'], 'the events of one service');
  t.match(one.body, /Recent events: Tools\/Buffer\.GPServer · <a href="\/ui\/services">every service<\/a>/);
  const board = await get(receiver, '/ui/', BEARER);
  t.equal(board.status, 200);
  t.notMatch(board.body, /fonts\.googleapis\.com/, "Bull Board's web font link is taken out");
});

t.test("with CHANGES and relay routes the board also lists the change queues and each route's queue", async (t) => {
  const route = { name: 'ops', url: 'http://127.0.0.1:9/hook', types: ['change.*'], format: 'standard', secret: SECRET_A };
  const receiver = await startReceiver(t, redis, {
    DASHBOARD_TOKEN: TOKEN,
    ADMIN_URL: 'http://127.0.0.1:9/arcgis/admin',
    CHANGES: 'Parcels.FeatureServer',
    GEOHOOK_CONFIG: configFile(t, { relays: [route] }),
  });
  const queues = JSON.parse((await get(receiver, '/ui/api/queues', BEARER)).body) as { queues: Array<{ name: string }> };
  t.same(queues.queues.map((queue) => queue.name).sort(), [
    'backfill',
    'change-events',
    'change-ranges',
    'feature-events',
    'gp-events',
    'relay-ops',
    'unknown-events',
  ]);

  // Issue 53: the recent events list the change events and the relay routes' tries beside the deliveries.
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  t.teardown(() => connection.disconnect());
  const change = changeUpdated({ id: 'change1' });
  const changeEvents = new Queue('change-events', { connection, prefix: receiver.prefix });
  await changeEvents.add(change.type, change, { jobId: change.id });
  await changeEvents.close();
  // Two events of the route: one waiting for its first try, one tried once in vain (a worker that fails it).
  const route1 = new Queue('relay-ops', { connection, prefix: receiver.prefix });
  const [waiting, tried] = [changeUpdated({ id: 'waiting1' }), changeUpdated({ id: 'tried1' })];
  await route1.add(tried.type, tried, { jobId: tried.id });
  const worker = new Worker(
    'relay-ops',
    async () => {
      throw new Error('answered 500');
    },
    { connection, prefix: receiver.prefix },
  );
  await new Promise((resolve) => worker.once('failed', resolve));
  await worker.close();
  await route1.add(waiting.type, waiting, { jobId: waiting.id });
  await route1.close();
  const rows = [...(await get(receiver, '/ui/services', BEARER)).body.matchAll(/<tr data-event="([^"]+)">(.*?)<\/tr>/g)].map(
    ([, id, cells]) => `${id} ${cells!.replace(/<[^>]+>/g, '|')}`,
  );
  t.match(
    rows.find((row) => row.startsWith('change1 ')),
    /\|change\.updated\|+Hosted\/Parcels\.FeatureServer\|+change1\|+change, webhook\|+waiting\|$/,
  );
  t.match(
    rows.find((row) => row.startsWith('tried1 ')),
    /\|change\.updated\|+Hosted\/Parcels\.FeatureServer\|+tried1\|+relay ops, try 1\|+failed\|$/,
  );
  t.match(
    rows.find((row) => row.startsWith('waiting1 ')),
    /\|relay ops, not tried yet\|+waiting\|$/,
  );
});

t.test('a subscription made at run time: the subscriptions view shows its waiting events, the board its queue', async (t) => {
  const receiver = await startReceiver(t, redis, { DASHBOARD_TOKEN: TOKEN });
  const connection = new Redis(redis.url);
  t.teardown(() => connection.quit());
  const listed = async (): Promise<string[]> =>
    (JSON.parse((await get(receiver, '/ui/api/queues', BEARER)).body) as { queues: Array<{ name: string }> }).queues.map(
      (queue) => queue.name,
    );
  t.notOk((await listed()).includes('sub-permits'), 'no subscription yet');
  t.match((await get(receiver, '/ui/subscriptions', BEARER)).body, /No subscription/);

  const registry = new SubscriptionRegistry(connection, receiver.prefix);
  t.equal(await registry.create({ name: 'permits', types: ['change.*', 'gp.*'] }, { origin: 'runtime' }), 'created');
  // What the fan-out adds to a subscription's queue: one job per event.
  const queue = new Queue('sub-permits', { connection, prefix: receiver.prefix });
  t.teardown(() => queue.close());
  await queue.addBulk([1, 2, 3].map((n) => ({ name: 'change.FeaturesCreated', data: { n }, opts: { jobId: `e${n}` } })));

  t.equal((await get(receiver, '/ui/subscriptions')).status, 302, 'no credentials: to the login page');
  const page = await get(receiver, '/ui/subscriptions', BEARER);
  t.equal(page.status, 200);
  t.match(
    page.body,
    /<tr data-subscription="permits"><td>permits<\/td><td data-column="types">change\.\*, gp\.\*<\/td><td data-column="waiting">3<\/td>/,
  );
  t.match(page.body, /<td data-column="deadLetters">0<\/td><td data-column="dropped">0<\/td><td data-column="origin">runtime<\/td>/);
  t.match(page.body, '<code>geohook consume --subscription permits</code>', 'the command that attaches a worker');
  t.match(page.body, /<a href="\/ui\/subscriptions">Subscriptions<\/a>/, 'the menu links the page');
  t.ok((await listed()).includes('sub-permits'), 'the board lists the queue of a subscription made after it first listed its queues');
  const jobs = JSON.parse((await get(receiver, '/ui/api/queues?activeQueue=sub-permits&status=waiting', BEARER)).body) as {
    queues: Array<{ name: string; counts: { waiting: number } }>;
  };
  t.equal(jobs.queues.find((entry) => entry.name === 'sub-permits')?.counts.waiting, 3, 'with its waiting events');
  await registry.delete('permits');
  t.notOk((await listed()).includes('sub-permits'), 'and drops it once the subscription is deleted');
});

t.test('the services page lists the services self-registration could not register', async (t) => {
  const receiver = await startReceiver(t, redis, { DASHBOARD_TOKEN: TOKEN });
  const connection = new Redis(redis.url);
  t.teardown(() => connection.quit());
  const failing = {
    service: 'Hosted/Broken.FeatureServer',
    reason: 'HTTP 403 <denied>',
    since: Date.now(),
    failures: 3,
    retryAt: Date.now(),
  };
  await connection.hset(`${receiver.prefix}:registration:default:failing`, failing.service, JSON.stringify(failing));
  const page = await get(receiver, '/ui/services', BEARER);
  t.match(page.body, '<tr data-failing="Hosted/Broken.FeatureServer">', 'the failing service has its row');
  t.match(page.body, 'HTTP 403 &lt;denied&gt;', 'with its reason, escaped');
});
