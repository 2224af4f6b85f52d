import t, { type Test } from 'tap';
import { defaultWebhookSettings, type WebhookSettings } from '../../src/arcgis/webhook-settings.js';
import { EmulatorClock, utcDay } from '../../src/emulator/clock.js';
import { DeliveryEngine } from '../../src/emulator/delivery/delivery-engine.js';
import type { EmulatorEvent } from '../../src/emulator/types.js';
import { webhookRecord } from '../helpers/webhook-record.js';

const created: EmulatorEvent = { kind: 'feature', changeTypes: ['FeaturesCreated'], layerId: 0, serverGens: [1, 2] };
const hook = webhookRecord();

/**
 * An engine whose receiver (an injected transport) answers `status()`; counts the POSTs and the
 * deactivations. Waits between attempts are skipped.
 */
function engineFor(t: Test, settings: Partial<WebhookSettings>, clock = new EmulatorClock()) {
  const deactivated: string[] = [];
  let status = 500;
  let posts = 0;
  const engine = new DeliveryEngine({
    clock,
    getSettings: () => ({ ...defaultWebhookSettings, ...settings }),
    onDeactivate: (webhookId) => deactivated.push(webhookId),
    restBaseUrl: 'http://127.0.0.1:7080/arcgis/rest/services',
    post: async () => {
      posts += 1;
      return status;
    },
    sleep: async () => undefined,
  });
  t.teardown(() => engine.close());
  const deliverOnce = async () => {
    const [record] = engine.fire([hook], created);
    await engine.idle();
    return record;
  };
  return { engine, deactivated, deliverOnce, answer: (code: number) => (status = code), posts: () => posts };
}

t.test('failures count per UTC day of the emulator clock and trip the policy on the right failure', async (t) => {
  const clock = new EmulatorClock();
  clock.set(Date.UTC(2024, 4, 1, 23));
  const { engine, deactivated, deliverOnce, posts } = engineFor(t, { notificationAttempts: 2, numberOfFailures: 2, daysInPast: 1 }, clock);
  t.equal((await deliverOnce())?.attempts.length, 2, 'a failure uses every attempt');
  t.equal(posts(), 2, 'and counts once, not per attempt');
  clock.advanceDays(1);
  await deliverOnce();
  t.same(deactivated, [], 'one failure on each of two days: under 2 over 1 day');
  await deliverOnce();
  t.same(deactivated, ['w'], 'the second failure of the day deactivates');
  t.same(
    [...engine.failuresByDay('w')],
    [
      [utcDay(Date.UTC(2024, 4, 1)), 1],
      [utcDay(Date.UTC(2024, 4, 2)), 2],
    ],
  );
});

t.test('the spec example (d) through the engine: days 1 and 3 fail twice, day 6 deactivates on its third failure', async (t) => {
  const clock = new EmulatorClock();
  clock.set(Date.UTC(2024, 6, 1, 8));
  const { deactivated, deliverOnce } = engineFor(t, { notificationAttempts: 1 }, clock);
  const failOn = async (day: number, times: number): Promise<void> => {
    clock.set(Date.UTC(2024, 6, day, 8));
    for (let n = 0; n < times; n += 1) await deliverOnce();
  };
  await failOn(1, 2);
  await failOn(3, 2);
  await failOn(6, 2);
  t.same(deactivated, [], 'after the 1st and 2nd failures of day 6');
  await failOn(6, 1);
  t.same(deactivated, ['w']);
});

t.test('a delivered event does not count as a failure', async (t) => {
  const { engine, deactivated, deliverOnce, answer } = engineFor(t, { notificationAttempts: 1, numberOfFailures: 1 });
  answer(204);
  t.equal((await deliverOnce())?.outcome, 'delivered');
  t.same(deactivated, []);
  t.equal(engine.failuresByDay('w').size, 0);
});

t.test('notificationStatus lists every finished delivery and resetFailures clears it with the count', async (t) => {
  const clock = new EmulatorClock();
  clock.set(Date.UTC(2023, 8, 26, 19));
  const { engine, deactivated, deliverOnce, answer } = engineFor(t, { notificationAttempts: 1, numberOfFailures: 2 }, clock);
  answer(200);
  await deliverOnce();
  answer(500);
  await deliverOnce();
  const statuses = engine.notificationStatus('w');
  t.same(
    statuses.map((entry) => entry.invoked),
    [true, false],
  );
  t.ok(
    statuses.every((entry) => utcDay(entry.invokedTimestamp) === utcDay(Date.UTC(2023, 8, 26))),
    'emulator clock times',
  );
  engine.resetFailures('w');
  t.same(engine.notificationStatus('w'), []);
  t.equal(engine.failuresByDay('w').size, 0);
  await deliverOnce();
  t.same(deactivated, [], 'one failure after the reset is under the policy');
});
