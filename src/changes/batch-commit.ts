import { readFileSync } from 'node:fs';
import type { Job } from 'bullmq';
import type { RedisClient } from '../redis/connection.js';
import type { PreviousValuesStore } from './previous-values.js';
import type { ResolveJobData } from './range-jobs.js';
import type { RangeBatch } from './resolve-range-types.js';

const setJobDataLua = readFileSync(new URL('./set-job-data.lua', import.meta.url), 'utf8');

/**
 * Writes a batch's previous values and moves its resolve job's cursor past it (`written`), in one MULTI: a retry finds
 * both, and goes on after the batch, or neither, and builds the batch again against the values its first attempt read.
 * Never the values alone: the batch built again would take its own `after` for its `before`, and a transition filter
 * could then pass an event it dropped (docs/changes.md#transitions). Its events are written before it. The scripts go
 * as text (`EVAL`, which Redis caches): a call inside a MULTI must not depend on Redis's script cache.
 */
export async function commitBatch(
  connection: RedisClient,
  previous: PreviousValuesStore,
  job: Job<ResolveJobData>,
  layers: RangeBatch['writes'],
  written: number,
): Promise<void> {
  const data: ResolveJobData = { ...job.data, written };
  const transaction = connection.multi();
  for (const { key, writes } of layers) previous.queueWrite(transaction, key, writes);
  transaction.eval(setJobDataLua, 1, `${job.queueQualifiedName}:${job.id}`, JSON.stringify(data));
  const answers = (await transaction.exec()) ?? [];
  const failed = answers.find(([err]) => err !== null)?.[0];
  if (failed) throw failed;
  if (answers.at(-1)?.[1] === -1) throw new Error(`resolve job ${job.id} is gone: its cursor was not moved`);
  job.data = data;
}
