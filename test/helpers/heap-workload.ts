import { getHeapStatistics } from 'node:v8';
import { boundHeapGrowth } from '../../src/cli/heap-growth.js';

/**
 * A process whose old generation fills with garbage, as a receiver's does: a live set, then batches of objects each
 * kept across 60 turns of the event loop (long enough to be promoted) and dropped. It bounds its heap growth as the
 * CLI does (unless `unbounded` is its argument), then prints the largest heap it had (MiB) as JSON.
 */
if (process.argv[2] !== 'unbounded') boundHeapGrowth();
const live: object[] = [];
for (let n = 0; n < 50_000; n += 1) live.push({ name: 'x'.repeat(50) + n, pair: [n, n + 1] });
const kept: object[][] = [];
let peak = 0;
for (let round = 0; round < 600; round += 1) {
  const batch: object[] = [];
  for (let n = 0; n < 2000; n += 1) batch.push({ id: `event-${round}-${n}`, data: { n, text: 'y'.repeat(100) + round } });
  kept.push(batch);
  if (kept.length > 60) kept.shift();
  peak = Math.max(peak, getHeapStatistics().total_heap_size);
  await new Promise((resolve) => setImmediate(resolve));
}
process.stdout.write(JSON.stringify({ peakHeapMib: peak / 2 ** 20, live: live.length }));
