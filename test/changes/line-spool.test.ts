import { existsSync, readdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { LineSpool } from '../../src/changes/line-spool.js';

t.test('a spool counts what it is given and reads it back in order, in batches; close removes its file', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'geohook-spool-test-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const spool = await LineSpool.open<{ n: number; text: string }>(dir);
  for (let n = 0; n < 1234; n += 1) await spool.write({ n, text: `line ${n}\nwith a newline and "quotes"` });
  t.equal(spool.count, 1234);
  const sizes: number[] = [];
  const read: number[] = [];
  for await (const batch of spool.batches(500)) {
    sizes.push(batch.length);
    for (const value of batch) {
      read.push(value.n);
      if (value.text !== `line ${value.n}\nwith a newline and "quotes"`) t.fail(`value ${value.n} read back changed`);
    }
  }
  t.same(sizes, [500, 500, 234]);
  t.same(
    read,
    Array.from({ length: 1234 }, (_value, index) => index),
    'in the order written',
  );
  t.equal(readdirSync(dir).length, 1, 'its folder exists until closed');
  await spool.close();
  t.same(readdirSync(dir), [], 'closed: nothing left');
});

t.test('a spool closed before it was read, or never written, leaves nothing behind', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'geohook-spool-test-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const written = await LineSpool.open<number>(dir);
  await written.write(1);
  await written.close();
  const empty = await LineSpool.open<number>(dir);
  const batches: number[][] = [];
  for await (const batch of empty.batches(10)) batches.push(batch);
  t.same(batches, [], 'nothing to read');
  await empty.close();
  t.same(readdirSync(dir), []);
  t.notOk(existsSync(join(dir, 'lines.ndjson')));
});
