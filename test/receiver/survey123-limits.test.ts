import Fastify from 'fastify';
import t, { type Test } from 'tap';
import { survey123Routes } from '../../src/receiver/survey123-route.js';
import { startEmulator, type TestEmulator } from '../helpers/emulator.js';

// Hardening of POST /webhooks/<hook>/survey123 (issue 55): an unauthenticated post costs at most one request to the
// portal, and however many come, the portal is asked a bounded number of times per hook.

const GLOBAL_ID = '{3F2504E0-4F89-11D3-9A0C-0305E82C3301}';
const BURST = 5;

/** The route alone on loopback, the emulator its portal, its clock frozen: the budget is never refilled. */
async function setUp(t: Test) {
  const emulator = await startEmulator(t);
  const closed: string[] = [];
  const app = Fastify();
  await app.register(survey123Routes, {
    hooks: new Set(['default', 'other']),
    portalUrl: `${emulator.url}/arcgis`,
    close: async (_hook, globalId) => {
      closed.push(globalId);
      return 'closed';
    },
    maxBodyBytes: 1_000_000,
    portalChecks: { burst: BURST, checksPerSecond: 1, now: () => 1_800_000_000_000 },
  });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  t.teardown(() => app.close());
  const post = async (token: string, hook = 'default') => {
    const response = await fetch(`${base}/webhooks/${hook}/survey123`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ eventType: 'addData', feature: { result: { globalId: GLOBAL_ID } }, portalInfo: { token } }),
    });
    return { status: response.status, code: ((await response.json()) as { code?: string }).code };
  };
  return { emulator, closed, post, portalCalls: () => portalCalls(emulator) };
}

const portalCalls = (emulator: TestEmulator): number =>
  emulator.requests.filter((line) => line.startsWith('POST /arcgis/sharing/rest/community/self')).length;

t.test('the same refused token posted 30 times asks the portal once', async (t) => {
  const { post, portalCalls, closed } = await setUp(t);
  for (let n = 0; n < 30; n += 1) t.match(await post('not-a-token'), { status: 401, code: 'GEOHOOK_ERR_PORTAL_TOKEN' });
  t.equal(portalCalls(), 1);
  t.same(closed, [], 'nothing closed');
});

t.test('30 distinct bad tokens ask the portal at most the burst per hook; past it 503, and a good token waits too', async (t) => {
  const { post, portalCalls, emulator, closed } = await setUp(t);
  const answers = [];
  for (let n = 0; n < 30; n += 1) answers.push(await post(`bad-${n}`));
  t.equal(portalCalls(), BURST, `${BURST} portal calls for 30 posts`);
  t.equal(answers.filter((answer) => answer.code === 'GEOHOOK_ERR_PORTAL_TOKEN').length, BURST);
  t.ok(
    answers.slice(BURST).every((answer) => answer.status === 503 && answer.code === 'GEOHOOK_ERR_PORTAL_UNAVAILABLE'),
    'past the burst: 503, nothing asked',
  );
  t.match(await post(await emulator.token()), { status: 503 }, 'the hook is out of checks until its budget refills');
  t.equal((await post(await emulator.token(), 'other')).status, 200, 'another hook has a budget of its own');
  t.same(closed, [GLOBAL_ID]);
  t.equal(portalCalls(), BURST + 1);
});
