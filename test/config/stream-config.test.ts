import t from 'tap';
import { loadConfig } from '../../src/config/load-config.js';
import type { GeohookError } from '../../src/errors.js';
import { configFile } from '../helpers/receiver.js';

const REDIS_URL = 'redis://127.0.0.1:6390';

/** loadConfig of a GEOHOOK_CONFIG with one relay route. */
const load = (t: Parameters<typeof configFile>[0], route: Record<string, unknown>) =>
  loadConfig({ REDIS_URL, GEOHOOK_CONFIG: configFile(t, { relays: [{ name: 'r', types: ['change.*'], ...route }] }) });

/** The message of the config error `run` throws. */
function refusal(t: Parameters<typeof configFile>[0], run: () => unknown): string {
  try {
    run();
  } catch (err) {
    t.equal((err as GeohookError).code, 'GEOHOOK_ERR_CONFIG');
    return (err as Error).message;
  }
  t.fail('no error');
  return '';
}

t.test('nats and amqp routes load with their defaults left to the publisher', async (t) => {
  const config = load(t, { format: 'nats', url: 'nats://a:4222, nats://b:4222', stream: 'EDITS', auth: { nkeySeed: 'SUAEXAMPLE' } });
  t.match(config.relays[0], { format: 'nats', stream: 'EDITS', url: 'nats://a:4222, nats://b:4222' });
  const amqp = load(t, { format: 'amqp', url: 'amqps://mq:5671/edits', exchange: 'gis', routingKey: 'edits.<service>.<op>' });
  t.match(amqp.relays[0], { format: 'amqp', exchange: 'gis', routingKey: 'edits.<service>.<op>' });
});

t.test('a stream route that does not fit is refused with the field and the fix', async (t) => {
  t.match(
    refusal(t, () => load(t, { format: 'nats', url: 'http://a:4222' })),
    /route "r": a nats route's url starts with nats:\/\/ or tls:\/\//,
  );
  t.match(
    refusal(t, () => load(t, { format: 'amqp', url: 'amqp://guest:secret@mq:5672' })),
    /put them in "auth"/,
  );
  t.notMatch(
    refusal(t, () => load(t, { format: 'amqp', url: 'amqp://guest:secret@mq:5672' })),
    /secret@/,
    'the password is not repeated',
  );
  t.match(
    refusal(t, () => load(t, { format: 'nats', url: 'nats://a:4222', subject: 'geohook.<layerId>' })),
    /subject names <layerId>/,
  );
  t.match(
    refusal(t, () => load(t, { format: 'nats', url: 'nats://a:4222', exchange: 'x' })),
    /"exchange" is for amqp routes/,
  );
  t.match(
    refusal(t, () => load(t, { format: 'amqp', url: 'amqp://mq', auth: { token: 'x' } })),
    /signs in with \{"user","password"\}/,
  );
  t.match(
    refusal(t, () => load(t, { format: 'nats', url: 'nats://a', auth: { user: 'u' } })),
    /auth needs both "user" and "password"/,
  );
  t.match(
    refusal(t, () => load(t, { format: 'nats', url: 'nats://a', secret: 'whsec_x' })),
    /not signed: remove its secret/,
  );
  t.match(
    refusal(t, () => load(t, { url: 'https://example.com/hook', format: 'slack', stream: 'X' })),
    /"stream" is for nats and amqp routes/,
  );
  t.match(
    refusal(t, () => load(t, { url: 'nats://a:4222', format: 'slack' })),
    /an http\(s\) URL/,
  );
});
