import t from 'tap';
import { bench } from './run-bench.js';

// The sections the bench runs alone, in a file of their own: tap runs it beside the long run of bench-smoke.
t.setTimeout(3 * 60_000);

t.test('a section alone (--features --json) prints only that section: the bulk, the extractChanges and the memory', async (t) => {
  const report = JSON.parse(await bench(['--features', '--emulator-features', '200', '--json'])) as Record<string, unknown>;
  t.same(Object.keys(report), ['emulatorFeatures']);
  t.match(report, {
    emulatorFeatures: {
      features: 200,
      resultRows: 200,
      bulkSeconds: Number,
      extractSeconds: Number,
      resultMiB: Number,
      peakRssMib: Number,
    },
  });
});

t.test('the scale section (--scale --json, two services) prints every figure of a large organization under `scale`', async (t) => {
  const { scale } = JSON.parse(await bench(['--scale', '--scale-services', '2', '--backfill-edits', '10', '--json'])) as {
    scale: Record<string, unknown> & { registration: { services: number }; targets: unknown[] };
  };
  for (const field of [
    'readySeconds',
    'passSeconds',
    'recoverySeconds',
    'recoveryRedisOps',
    'recoveryRedisCommandsTotal',
    'bytesPerConsumedEvent',
    'bytesPerConsumedEventUnranged',
    'backfillBytesPerEdit',
  ]) {
    t.ok(typeof scale[field] === 'number' && Number.isFinite(scale[field]) && (scale[field] as number) > 0, `${field}: ${scale[field]}`);
  }
  t.equal(scale.registration.services, 2);
  t.equal(scale.targets.length, 6, 'each figure against its goal');
});
