import { readFileSync } from 'node:fs';
import type { ChainableCommander, Result } from 'ioredis';
import type { RedisClient } from '../redis/connection.js';

/** What geohook keeps of a feature it saw: the generation, its GlobalID, a hash of its geometry, its tracked fields. */
export interface PreviousValues {
  /** The end of the range it was last seen in: an older range never overwrites it. */
  serverGen: number;
  objectId: number;
  globalId?: string;
  geometryHash?: string;
  /** The tracked fields' values. */
  attributes: Record<string, unknown>;
}

/** A change to the store: the feature's values as of `serverGen`, or its removal (a delete). */
export type PreviousValuesWrite = { objectId: number; serverGen: number; globalId?: string } & (
  { deleted: true } | { deleted?: false; geometryHash?: string; attributes: Record<string, unknown> }
);

declare module 'ioredis' {
  interface RedisCommander<Context> {
    geohookWritePrevious(key: string, ...args: string[]): Result<number, Context>;
  }
}

/**
 * Writes features' values unless the store holds a newer version (`write-previous.lua`, beside this module: its header
 * says its KEYS and ARGV).
 */
const writeLua = readFileSync(new URL('./write-previous.lua', import.meta.url), 'utf8');

const BATCH = 1000;

function encode(write: Exclude<PreviousValuesWrite, { deleted: true }>): string {
  return [write.serverGen, write.globalId ?? '', write.geometryHash ?? '', JSON.stringify(write.attributes)].join('\t');
}

/** The script's ARGV for `writes`, {@link BATCH} features a call. */
function* scriptArgs(writes: readonly PreviousValuesWrite[]): Generator<string[]> {
  for (let start = 0; start < writes.length; start += BATCH) {
    yield writes
      .slice(start, start + BATCH)
      .flatMap((write) => [
        String(write.objectId),
        String(write.serverGen),
        write.globalId ?? '',
        write.deleted === true ? '' : encode(write),
      ]);
  }
}

function decode(objectId: number, value: string): PreviousValues {
  const [gen = '0', globalId = '', geometryHash = '', ...json] = value.split('\t');
  const previous: PreviousValues = { serverGen: Number(gen), objectId, attributes: JSON.parse(json.join('\t')) as Record<string, unknown> };
  if (globalId !== '') previous.globalId = globalId;
  if (geometryHash !== '') previous.geometryHash = geometryHash;
  return previous;
}

/**
 * The previous-values store of one layer (a Redis hash `key`): per feature, what geohook last saw of it, so that an
 * update says its tracked fields before and which changed, and a delete its GlobalID and last values.
 */
export class PreviousValuesStore {
  readonly #redis: RedisClient;

  constructor(redis: RedisClient) {
    this.#redis = redis;
    if (typeof redis.geohookWritePrevious !== 'function') redis.defineCommand('geohookWritePrevious', { numberOfKeys: 1, lua: writeLua });
  }

  /** The values kept of the features with these object ids or GlobalIDs, by the id asked with. */
  async read(key: string, ids: readonly (number | string)[]): Promise<Map<number | string, PreviousValues>> {
    const found = new Map<number | string, PreviousValues>();
    const byGlobalId = ids.filter((id): id is string => typeof id === 'string');
    const objectIdOf = new Map<number | string, number>(ids.filter((id): id is number => typeof id === 'number').map((id) => [id, id]));
    for (let start = 0; start < byGlobalId.length; start += BATCH) {
      const chunk = byGlobalId.slice(start, start + BATCH);
      const values = await this.#redis.hmget(key, ...chunk.map((id) => `g:${id}`));
      chunk.forEach((id, index) => {
        if (values[index] != null) objectIdOf.set(id, Number(values[index]));
      });
    }
    const asked = [...objectIdOf];
    for (let start = 0; start < asked.length; start += BATCH) {
      const chunk = asked.slice(start, start + BATCH);
      const values = await this.#redis.hmget(key, ...chunk.map(([, objectId]) => String(objectId)));
      chunk.forEach(([id, objectId], index) => {
        const value = values[index];
        if (value != null) found.set(id, decode(objectId, value));
      });
    }
    return found;
  }

  /** Writes the features' values (or removes them), unless newer ones are kept. */
  async write(key: string, writes: readonly PreviousValuesWrite[]): Promise<void> {
    for (const args of scriptArgs(writes)) await this.#redis.geohookWritePrevious(key, ...args);
  }

  /**
   * {@link write}'s script calls, queued on `transaction` (a MULTI its caller executes) with the script's text (`EVAL`):
   * an `EVALSHA` that Redis no longer knows would be sent again by ioredis outside the MULTI.
   */
  queueWrite(transaction: ChainableCommander, key: string, writes: readonly PreviousValuesWrite[]): void {
    for (const args of scriptArgs(writes)) transaction.eval(writeLua, 1, key, ...args);
  }
}
