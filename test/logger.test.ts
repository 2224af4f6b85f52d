import Fastify from 'fastify';
import t from 'tap';
import { requestLogController } from '../src/logger.js';
import { capturingLogger } from './helpers/log-capture.js';

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
