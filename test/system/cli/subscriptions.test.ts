import t from 'tap';
import { runCli } from '../../helpers/cli.js';
import { uniquePrefix } from '../../helpers/receiver.js';
import { startRedis } from '../../helpers/redis.js';

t.setTimeout(90_000);

t.test('geohook subscriptions create, list and delete one; a refused flag or name is one line naming it and the fix', async (t) => {
  const redis = await startRedis(t);
  const env = { REDIS_URL: redis.url, GEOHOOK_PREFIX: uniquePrefix() };
  const cli = (...args: string[]) => runCli(['subscriptions', ...args], { env });

  const created = await cli(
    'create',
    'permits',
    '--types',
    'change.*,gp.job.failed',
    '--where',
    "status = 'Open'",
    '--backlog-count',
    '50',
  );
  t.equal(created.code, 0, created.stderr);
  t.strictSame(JSON.parse(created.stdout), { subscription: 'permits', created: true, queue: 'sub-permits' });

  const listed = await cli('list', '--json');
  t.equal(listed.code, 0, listed.stderr);
  t.match(JSON.parse(listed.stdout), {
    subscriptions: [
      {
        name: 'permits',
        types: ['change.*', 'gp.job.failed'],
        where: "status = 'Open'",
        origin: 'runtime',
        waiting: 0,
        active: 0,
        failed: 0,
        deadLetters: 0,
        dropped: 0,
        lagSeconds: 0,
        backlog: { count: 50, ageSeconds: 604_800 },
      },
    ],
  });

  const again = await cli('create', 'permits', '--types', 'gp.*');
  t.equal(again.code, 1);
  t.match(again.stderr, /^geohook: subscriptions create: "permits" exists: delete it first, or choose another name\n$/);

  const badType = await cli('create', 'other', '--types', '*');
  t.equal(badType.code, 1);
  t.match(badType.stderr, /^geohook: subscriptions create: --types \(0\): patterns of change\., feature\. or gp\. events/);
  const badName = await cli('create', 'Other', '--types', 'gp.*');
  t.match(badName.stderr, /^geohook: subscriptions create: NAME: lower-case letters, digits and "-"/);
  const badFrom = await cli('create', 'other', '--types', 'gp.*', '--from', 'yesterday');
  t.match(badFrom.stderr, /^geohook: subscriptions create: --from "yesterday": an ISO 8601 time in the past/);
  t.notMatch(badType.stderr + badName.stderr + badFrom.stderr, /\bat .*\.js:\d+/, 'no stack');

  const deleted = await cli('delete', 'permits');
  t.equal(deleted.code, 0, deleted.stderr);
  t.strictSame(JSON.parse(deleted.stdout), { subscription: 'permits', deleted: true });
  const gone = await cli('delete', 'permits');
  t.equal(gone.code, 1);
  t.match(gone.stderr, /no subscription "permits"/);
  const unknown = await runCli(['consume', '--subscription', 'permits'], { env });
  t.equal(unknown.code, 1, 'consume of a subscription that does not exist stops at once');
  t.match(
    unknown.stderr,
    /^geohook: consume --subscription: no subscription "permits": nothing reaches its queue until it is made \(geohook subscriptions create permits/,
  );
  t.match(JSON.parse((await cli('list', '--json')).stdout), { subscriptions: [] });
});
