import t, { type Test } from 'tap';
import { loadConfig } from '../../src/config/load-config.js';
import { ConfigError } from '../../src/errors.js';

const subscription = { name: 'permits', types: ['change.*'] };

/** The configuration of a GEOHOOK_CONFIG file holding `content`. */
function withFile(t: Test, content: object) {
  const dir = t.testdir({ 'geohook.json': JSON.stringify(content) });
  return () => loadConfig({ GEOHOOK_CONFIG: `${dir}/geohook.json` });
}

/** The message of the ConfigError loading `content` throws. */
function refusal(t: Test, content: object): string {
  try {
    withFile(t, content)();
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  throw new Error('the configuration was accepted');
}

t.test('subscriptions are read with the backlog and event log defaults; none by default', async (t) => {
  const none = loadConfig({});
  t.strictSame(none.subscriptions, []);
  t.strictSame(none.subscriptionBacklog, { count: 100_000, ageSeconds: 604_800 });
  t.strictSame(none.eventLog, { retentionSeconds: 86_400, maxLagSeconds: 30 });
  const read = withFile(t, {
    subscriptions: [{ ...subscription, backlog: { count: 10 } }],
    subscriptionBacklog: { ageSeconds: 60 },
    eventLog: { retentionSeconds: 0, maxLagSeconds: 0.5 },
  })();
  t.match(read.subscriptions, [{ ...subscription, backlog: { count: 10 } }]);
  t.strictSame(read.subscriptionBacklog, { count: 100_000, ageSeconds: 60 });
  t.strictSame(read.eventLog, { retentionSeconds: 0, maxLagSeconds: 0.5 });
});

t.test('a bad name, pattern, where or cap, layers without services and a second of one name are refused with the path', async (t) => {
  t.match(
    refusal(t, { subscriptions: [{ ...subscription, name: 'Permits' }] }),
    /subscriptions\[0\]\.name": lower-case letters, digits and "-"/,
  );
  t.match(
    refusal(t, { subscriptions: [{ ...subscription, types: ['*'] }] }),
    /subscriptions\[0\]\.types\[0\]": patterns of change\., feature\. or gp\. events/,
  );
  t.match(
    refusal(t, { subscriptions: [{ ...subscription, where: "status = 'Open" }] }),
    /subscriptions\[0\]\.where": not a where clause geohook reads/,
  );
  t.match(
    refusal(t, { subscriptions: [{ ...subscription, backlog: { count: 0 } }] }),
    /subscriptions\[0\]\.backlog\.count": at least 1 event/,
  );
  t.match(refusal(t, { subscriptions: [{ ...subscription, layers: [0] }] }), /subscriptions\[0\]\.layers": layers need services/);
  t.match(
    refusal(t, { subscriptions: [subscription, subscription] }),
    /subscriptions\[1\]\.name": subscription "permits": a second of this name/,
  );
  t.match(refusal(t, { subscriptions: [{ ...subscription, url: 'https://x' }] }), /subscriptions\[0\]\.url": unknown key/);
  t.match(refusal(t, { eventLog: { maxLagSeconds: 3601 } }), /eventLog\.maxLagSeconds": from 0 to 3600 seconds/);
  t.match(refusal(t, { eventLog: { maxLagSeconds: -1 } }), /eventLog\.maxLagSeconds": from 0 to 3600 seconds/);
});
