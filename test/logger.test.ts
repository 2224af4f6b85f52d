import { once } from 'node:events';
import { connect, type AddressInfo } from 'node:net';
import Fastify, { type FastifyRequest } from 'fastify';
import { Redis } from 'ioredis';
import t from 'tap';
import { personLine, requestLogController } from '../src/logger.js';
import { capturingLogger } from './helpers/log-capture.js';
import { startRedis } from './helpers/redis.js';

/** A Fastify app logging through geohook's options at `level`, its request lines at `requestLevel`. */
async function appLogging(level: string, requestLevel: 'info' | 'debug') {
  const { logger, lines } = capturingLogger(level);
  const app = Fastify({ loggerInstance: logger, logController: requestLogController(requestLevel) });
  app.get('/ok', async () => ({ ok: true }));
  app.get('/boom', async () => {
    throw new Error('boom');
  });
  await app.ready();
  return { app, messages: () => lines.map((line) => JSON.parse(line) as { level: number; msg: string; req?: { url: string } }) };
}

t.test('request logs at info by default, at debug when asked: hidden at LOG_LEVEL=info, shown at debug', async (t) => {
  const atInfo = await appLogging('info', 'info');
  await atInfo.app.inject('/ok');
  t.same(
    atInfo.messages().map((entry) => [entry.level, entry.msg]),
    [
      [30, 'incoming request'],
      [30, 'request completed'],
    ],
  );

  const quiet = await appLogging('info', 'debug');
  await quiet.app.inject('/ok');
  t.same(quiet.messages(), [], 'no request lines at info');

  const debugging = await appLogging('debug', 'debug');
  await debugging.app.inject('/ok');
  t.same(
    debugging.messages().map((entry) => [entry.level, entry.msg]),
    [
      [20, 'incoming request'],
      [20, 'request completed'],
    ],
  );
});

t.test('a request that fails is still logged as an error when request logs are at debug', async (t) => {
  const quiet = await appLogging('info', 'debug');
  await quiet.app.inject('/boom');
  t.ok(
    quiet.messages().some((entry) => entry.level === 50 && entry.msg === 'boom'),
    'the error is logged',
  );
});

t.test('the value of a token query parameter never reaches a log line', async (t) => {
  const { app, messages } = await appLogging('info', 'info');
  await app.inject('/ok?f=json&token=s3cret-token&Token=other');
  const urls = messages().flatMap((entry) => (entry.req === undefined ? [] : [entry.req.url]));
  t.same(urls, ['/ok?f=json&token=[redacted]&Token=[redacted]']);
});

/** Sends `GET <target>` as it is, byte for byte, and resolves once the answer has come. */
async function rawGet(port: number, target: string): Promise<void> {
  const socket = connect(port, '127.0.0.1');
  socket.write(`GET ${target} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`);
  socket.resume();
  await once(socket, 'close');
}

t.test('a token is redacted however its parameter name is spelt: percent-encoded, as a fragment, in another case (L5)', async (t) => {
  const { logger, lines } = capturingLogger('info');
  const messages = () => lines.map((line) => JSON.parse(line) as { req?: { url: string } });
  const app = Fastify({ loggerInstance: logger });
  // As the receiver's: Fastify's own would log "Route GET:<url> not found" with the URL as it came.
  app.setNotFoundHandler((_request, reply) => reply.code(404).send());
  const seen: unknown[] = [];
  app.get('/login', async (request: FastifyRequest<{ Querystring: { token?: unknown } }>) => {
    seen.push(request.query.token);
    return {};
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  t.teardown(() => app.close());
  const port = (app.server.address() as AddressInfo).port;
  const secret = 'dash-token-0123456789abcdef';
  // Fastify itself reads these as the query parameter `token`: each one would sign in.
  const readByFastify = ['?%74oken=', '?tok%65n=', '?%74%6F%6B%65%6E=', '#token=', '?f=json&%74oken='];
  // Other servers and parsers may: another case, double encoding, brackets, spaces, other separators.
  const readByOthers = [
    '?TOKEN=',
    '?Tok%45n=',
    '?%2574oken=',
    '?%u0074oken=',
    '?token[]=',
    '?+token+=',
    '?a=1;token=',
    '?a=1?token=',
    ';token=',
  ];
  for (const spelling of [...readByFastify, ...readByOthers]) await rawGet(port, `/login${spelling}${secret}&f=json`);
  t.same(
    seen.slice(0, readByFastify.length),
    Array(readByFastify.length).fill(`${secret}`),
    'Fastify hands each of the first to the route as the token',
  );

  const urls = messages().flatMap((entry) => (entry.req === undefined ? [] : [entry.req.url]));
  t.equal(urls.length, readByFastify.length + readByOthers.length, 'every request was logged with its URL');
  for (const url of urls) {
    t.notOk(url.includes(secret), `${url} holds no token`);
    t.match(url, /\[redacted\]&f=json$/, 'the rest of the query stays readable');
  }
  t.notOk(JSON.stringify(messages()).includes(secret), 'no line holds it anywhere');
});

t.test('parameters whose name only contains "token" stay readable', async (t) => {
  const { app, messages } = await appLogging('info', 'info');
  await app.inject('/ok?crc_token=abc123&tokens=2&access_token_hint=x');
  const urls = messages().flatMap((entry) => (entry.req === undefined ? [] : [entry.req.url]));
  t.same(urls, ['/ok?crc_token=abc123&tokens=2&access_token_hint=x']);
});

t.test('the password of a logged redisUrl never reaches a log line', async (t) => {
  const { logger, lines } = capturingLogger('info');
  logger.info({ redisUrl: 'redis://:s3cret-pass@127.0.0.1:6379' }, 'a');
  logger.info({ redisUrl: 'rediss://user:s3cret-pass@redis.example:6380/0' }, 'b');
  logger.info({ redisUrl: 'redis://127.0.0.1:6379' }, 'c');
  t.same(
    lines.map((line) => (JSON.parse(line) as { redisUrl: string }).redisUrl),
    ['redis://:[redacted]@127.0.0.1:6379', 'rediss://user:[redacted]@redis.example:6380/0', 'redis://127.0.0.1:6379'],
  );
});

t.test('a relay route is logged by its name, format and types: never its secret, URL or headers', async (t) => {
  const { logger, lines } = capturingLogger('info');
  const route = {
    name: 'flow',
    url: 'https://prod.example.logic.azure.com/workflows/1/triggers/manual?sig=SIGNATURE-IN-URL',
    types: ['change.*'],
    format: 'powerautomate',
    secret: 'SHARED-SECRET-VALUE',
    headers: { authorization: 'Bearer HEADER-CREDENTIAL' },
  };
  logger.info({ route }, 'one route');
  logger.info({ relays: [route, { ...route, name: 'second', secret: ['whsec_A', 'whsec_B'] }] }, 'all routes');
  logger.info({ route: 'flow' }, 'a route by name');
  const text = lines.join('\n');
  t.notMatch(text, /SIGNATURE-IN-URL|SHARED-SECRET-VALUE|HEADER-CREDENTIAL|whsec_/);
  t.match(JSON.parse(lines[0]!), { route: { name: 'flow', format: 'powerautomate', types: ['change.*'] } });
  t.match(JSON.parse(lines[1]!), { relays: [{ name: 'flow' }, { name: 'second' }] });
  t.match(JSON.parse(lines[2]!), { route: 'flow' });
});

t.test("a Redis error's command is logged by its name, never with its arguments (AUTH's password)", async (t) => {
  const server = await startRedis(t, { requirePassword: true });
  const client = new Redis(`redis://default:wr0ng-s3cret@127.0.0.1:${server.port}`, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  const refused = new Promise<unknown>((resolve) => client.once('error', resolve));
  client.connect().catch(() => undefined);
  t.teardown(() => client.disconnect());
  const err = await refused;
  t.match(err, { command: { name: 'auth', args: ['default', 'wr0ng-s3cret'] } }, 'ioredis keeps the password on the error');
  const { logger, lines } = capturingLogger('info');
  logger.error({ err }, 'redis refused');
  t.notMatch(lines.join('\n'), 'wr0ng-s3cret', 'the password is not in the log line');
  t.match(JSON.parse(lines[0]!), { err: { command: { name: 'auth', args: '[2 redacted]' } } });
});

t.test('a person’s line names the component once, even when the message starts with it ', async (t) => {
  t.equal(personLine({ component: 'mirror', msg: 'mirror: table copied' }, 'msg'), 'mirror: table copied');
  t.equal(personLine({ component: 'mirror', msg: 'table copied' }, 'msg'), 'mirror: table copied');
  t.equal(
    personLine({ component: 'registration', msg: 'registration still failing, same cause' }, 'msg'),
    'registration still failing, same cause',
  );
  t.equal(
    personLine({ component: 'relay', msg: 'route x failing', type: 'change.created', service: 'Hosted/P', eventId: 'e1' }, 'msg'),
    'relay: route x failing change.created Hosted/P e1',
  );
  t.equal(personLine({ msg: 'ready' }, 'msg'), 'ready');
});
