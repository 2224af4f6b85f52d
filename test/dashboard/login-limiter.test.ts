import t from 'tap';
import { addressKey, LoginLimiter } from '../../src/dashboard/login-limiter.js';

/** A limiter on a clock the test moves. */
function limiterAt(options: ConstructorParameters<typeof LoginLimiter>[0] = {}) {
  let nowMs = 1_000_000;
  const limiter = new LoginLimiter({ ...options, now: () => nowMs });
  return { limiter, advance: (ms: number) => (nowMs += ms) };
}

t.test('ten wrong attempts are free; then each one doubles the wait, from 1 s up to 5 minutes', async (t) => {
  const { limiter, advance } = limiterAt();
  const ip = '192.0.2.7';
  for (let attempt = 1; attempt <= 10; attempt += 1) {
    t.equal(limiter.failed(ip), 0, `failure ${attempt} costs nothing`);
    t.equal(limiter.waitSeconds(ip), 0);
  }
  const waits: number[] = [];
  for (let attempt = 11; attempt <= 22; attempt += 1) {
    const wait = limiter.failed(ip);
    waits.push(wait);
    t.equal(limiter.waitSeconds(ip), wait, 'the wait is what the failure said');
    advance(wait * 1000 - 1);
    t.equal(limiter.waitSeconds(ip), 1, 'one millisecond before its end, one more second');
    advance(1);
    t.equal(limiter.waitSeconds(ip), 0, 'then the next attempt may be made');
  }
  t.same(waits, [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300]);
  t.equal(limiter.waitSeconds('192.0.2.8'), 0, 'another address is not affected');
});

t.test('an hour without a failure forgets the failures', async (t) => {
  const { limiter, advance } = limiterAt({ freeFailures: 2 });
  for (let attempt = 0; attempt < 5; attempt += 1) limiter.failed('192.0.2.2');
  t.equal(limiter.waitSeconds('192.0.2.2'), 4);
  advance(3_600_000 - 1);
  t.equal(limiter.failed('192.0.2.2'), 8, 'within the hour the count goes on');
  advance(3_600_000);
  t.equal(limiter.waitSeconds('192.0.2.2'), 0, 'an hour after the last failure, forgotten');
  t.equal(limiter.failed('192.0.2.2'), 0, 'from the start');
});

t.test('at most maxAddresses addresses are remembered; the one that failed longest ago goes first', async (t) => {
  const { limiter } = limiterAt({ freeFailures: 0, maxAddresses: 3 });
  for (const ip of ['192.0.2.1', '192.0.2.2', '192.0.2.3']) limiter.failed(ip);
  limiter.failed('192.0.2.1'); // now the latest
  limiter.failed('192.0.2.4');
  t.same(
    ['192.0.2.1', '192.0.2.2', '192.0.2.3', '192.0.2.4'].map((ip) => limiter.waitSeconds(ip)),
    [2, 0, 1, 1],
    '192.0.2.2 was forgotten',
  );
});

t.test('an IPv6 client counts by its /64; an IPv4-mapped address as its IPv4', async (t) => {
  t.equal(addressKey('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
  t.equal(addressKey('2001:0DB8:0001:0002:ffff:1:2:3'), '2001:db8:1:2::/64');
  t.equal(addressKey('2001:db8::1'), '2001:db8:0:0::/64');
  t.equal(addressKey('fe80::1%eth0'), 'fe80:0:0:0::/64');
  t.equal(addressKey('::1'), '0:0:0:0::/64');
  t.equal(addressKey('64:ff9b::192.0.2.1'), '64:ff9b:0:0::/64');
  t.equal(addressKey('::ffff:192.0.2.1'), '192.0.2.1');
  t.equal(addressKey('192.0.2.1'), '192.0.2.1');

  const { limiter } = limiterAt({ freeFailures: 1 });
  limiter.failed('2001:db8:1:2::a');
  limiter.failed('2001:db8:1:2:ffff::b');
  t.equal(limiter.waitSeconds('2001:db8:1:2::c'), 1, 'two hosts of one /64 share their failures');
  t.equal(limiter.waitSeconds('2001:db8:1:3::a'), 0, 'the next /64 does not');
  limiter.failed('::ffff:192.0.2.9');
  limiter.failed('192.0.2.9');
  t.equal(limiter.waitSeconds('192.0.2.9'), 1, 'IPv4 and IPv4-mapped are one address');
});
