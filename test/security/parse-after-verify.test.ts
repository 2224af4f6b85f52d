import t from 'tap';
import { sign } from '../../src/signature/sign.js';
import { countJobs, startReceiver, TEST_KEY } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';

const redis = await startRedis(t);

/** Calls `run` while counting the texts of at least `minLength` characters that JSON.parse is given. */
async function parsesOf(minLength: number, run: () => Promise<void>): Promise<number> {
  const parse = JSON.parse;
  let parsed = 0;
  JSON.parse = ((text: string, reviver?: Parameters<typeof parse>[1]) => {
    if (typeof text === 'string' && text.length >= minLength) parsed += 1;
    return parse(text, reviver);
  }) as typeof JSON.parse;
  try {
    await run();
  } finally {
    JSON.parse = parse;
  }
  return parsed;
}

t.test('issue 33 M2: a body is parsed only once its signature was checked, and a deep one not even then', async (t) => {
  const receiver = await startReceiver(t, redis, { MAX_BODY_BYTES: String(2 * 1_048_576) });
  const deep = `${'['.repeat(500_000)}${']'.repeat(500_000)}`;
  const inject = (body: string, headers: Record<string, string> = {}) =>
    receiver.app.inject({
      method: 'POST',
      url: '/webhooks/default',
      headers: { 'content-type': 'application/json', ...headers },
      payload: body,
    });

  let status = 0;
  t.equal(await parsesOf(deep.length, async () => void ({ statusCode: status } = await inject(deep))), 0, 'unsigned: never parsed');
  t.equal(status, 401);
  const forged = { 'x-service': sign('not-the-key', deep) };
  t.equal(await parsesOf(deep.length, async () => void ({ statusCode: status } = await inject(deep, forged))), 0, 'forged: never parsed');
  t.equal(status, 401);
  const signed = { 'x-service': sign(TEST_KEY, deep) };
  t.equal(
    await parsesOf(deep.length, async () => void ({ statusCode: status } = await inject(deep, signed))),
    0,
    'signed but deep: refused by the scan',
  );
  t.equal(status, 400);

  const flat = JSON.stringify({
    serviceType: 'GPServer',
    jobId: 'j1',
    events: [{ eventType: 'esriJobSucceeded' }],
    pad: 'x'.repeat(100_000),
  });
  const right = { 'x-service': sign(TEST_KEY, flat) };
  t.equal(await parsesOf(flat.length, async () => void ({ statusCode: status } = await inject(flat, right))), 1, 'signed: parsed once');
  t.equal(status, 202);
  t.equal(await countJobs(receiver.app), 1);
});
