import { readFileSync } from 'node:fs';
import type { Result } from 'ioredis';
import type { RedisClient } from '../redis/connection.js';
import {
  changesPendingKey,
  changesResolvedKey,
  submissionParentsKey,
  submissionPartsKey,
  submissionsDueKey,
  submissionsHeldKey,
  submissionsHoldingKey,
  submissionsWaitingKey,
  watermarksKey,
} from '../redis/keys.js';
import type { AttachmentEntry } from './change-event.js';
import { decodeParentRef, type ParentRef } from './parent-ref.js';
import type { ParentPart, SubmissionFeature } from './submission-event.js';
import type { SubmissionPart } from './submission-parts.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    geohookRecordSubmissionParts(numberOfKeys: number, ...keysAndArgs: (string | number)[]): Result<(number | string)[], Context>;
    geohookClaimSubmissions(numberOfKeys: number, ...keysAndArgs: (string | number)[]): Result<string[], Context>;
    geohookCloseBySurvey123(numberOfKeys: number, ...keysAndArgs: (string | number)[]): Result<number, Context>;
  }
}

// The scripts, beside this module: their headers say their KEYS and ARGV.
const lua = (name: string): string => readFileSync(new URL(`./${name}`, import.meta.url), 'utf8');
const recordLua = lua('record-submission-parts.lua');
const claimLua = lua('claim-submissions.lua');
const closeLua = lua('close-by-survey123.lua');

/** How long the parts of a submission are kept, whether or not it closes: a part of one that closed arrives late. */
const PARTS_KEPT_MS = 600_000;
/** Parts recorded per script call. */
const PARTS_PER_CALL = 500;
/** How long a Survey123 webhook that came before its parent is kept, ms. */
const MARK_KEPT_MS = 3_600_000;
/** How long a due submission waits for a resolver that lags (or a scope no longer followed) before it closes even so, ms. */
const HELD_AT_MOST_MS = 300_000;

/** A claimed submission's parts, as recorded. */
export interface SubmissionParts {
  parent: ParentPart | undefined;
  /** A parent kept as a reference only (no other part came with it): its row is read when the submission closes. */
  parentRef: ParentRef | undefined;
  related: SubmissionFeature[];
  attachments: (AttachmentEntry & { layer: number })[];
  survey123: boolean;
}

/**
 * The submissions being put together (docs/submissions.md), in Redis so that any receiver records their parts,
 * any closes them, and one killed mid-way loses nothing: a claimed submission is leased, and claimed again once its
 * lease ran out without it being finished.
 */
export class SubmissionStore {
  readonly #redis: RedisClient;
  readonly #prefix: string;

  constructor(redis: RedisClient, prefix: string) {
    this.#redis = redis;
    this.#prefix = prefix;
    if (typeof redis.geohookRecordSubmissionParts !== 'function') {
      redis.defineCommand('geohookRecordSubmissionParts', { lua: recordLua });
      redis.defineCommand('geohookClaimSubmissions', { lua: claimLua });
      redis.defineCommand('geohookCloseBySurvey123', { lua: closeLua });
    }
  }

  /**
   * This period's parents and the last one's (each kept {@link PARTS_KEPT_MS} twice): a parent is found for at
   * least `PARTS_KEPT_MS` after it was recorded, and a period's parents go at once when their key expires.
   */
  #parentsKeys(now: number): [string, string] {
    const bucket = Math.floor(now / PARTS_KEPT_MS);
    return [submissionParentsKey(this.#prefix, bucket), submissionParentsKey(this.#prefix, bucket - 1)];
  }

  /**
   * Records parts of the service whose scope (`<hook> <service>`, as `scopeOf` makes it) is `serviceScope` (a part already
   * kept is left as it is); a submission with its parent and another part is due `windowMs` after its last. Returns
   * how many were new, and the submissions that a Survey123 webhook which came before their parent closed (due once
   * the range is settled).
   */
  async record(
    parts: readonly SubmissionPart[],
    serviceScope: string,
    windowMs: number,
    now = Date.now(),
  ): Promise<{ added: number; closed: string[] }> {
    let added = 0;
    const closed: string[] = [];
    for (let start = 0; start < parts.length; start += PARTS_PER_CALL) {
      const args = parts
        .slice(start, start + PARTS_PER_CALL)
        .flatMap(({ submission, field, json, parentOf }) => [submission, field, json, parentOf ?? '']);
      const [count, ...ids] = await this.#redis.geohookRecordSubmissionParts(
        4,
        submissionsDueKey(this.#prefix),
        ...this.#parentsKeys(now),
        submissionsWaitingKey(this.#prefix),
        this.#prefix,
        now,
        windowMs,
        PARTS_KEPT_MS,
        2 * PARTS_KEPT_MS,
        serviceScope,
        ...args,
      );
      added += Number(count);
      closed.push(...ids.map(String));
    }
    return { added, closed };
  }

  /** After a range is written: its submissions a Survey123 webhook closed are due at once (their every part is recorded). */
  async settle(submissions: Iterable<string>, now = Date.now()): Promise<void> {
    const ids = [...submissions];
    if (ids.length === 0) return;
    const read = this.#redis.multi();
    // The Survey123 mark is set only on a submission whose parent is kept.
    for (const id of ids) read.hget(submissionPartsKey(this.#prefix, id), 'survey123');
    const answers = (await read.exec()) ?? [];
    const closed = ids.filter((_, index) => answers[index]?.[1] === '1');
    if (closed.length > 0) await this.#redis.zadd(submissionsDueKey(this.#prefix), ...closed.flatMap((id) => [now, id]));
  }

  /** The Survey123 webhook for the parent `globalId`: its submission due at once, or marked for when its parent is recorded. */
  async closeBySurvey123(hook: string, globalId: string, now = Date.now()): Promise<'closed' | 'marked'> {
    const closed = await this.#redis.geohookCloseBySurvey123(
      4,
      submissionsDueKey(this.#prefix),
      ...this.#parentsKeys(now),
      submissionsWaitingKey(this.#prefix),
      this.#prefix,
      now,
      `${hook}\n${globalId}`,
      hook,
      globalId,
      MARK_KEPT_MS,
      PARTS_KEPT_MS,
    );
    return closed === 1 ? 'closed' : 'marked';
  }

  /**
   * Claims up to `limit` submissions due by `now`, each leased for `leaseMs`: those whose service's scopes the
   * resolver has resolved up to their watermarks when the submission became due (`claim-submissions.lua`); the others
   * are held until it has (at most {@link HELD_AT_MOST_MS}).
   */
  claim(now: number, leaseMs: number, limit: number): Promise<string[]> {
    const prefix = this.#prefix;
    return this.#redis.geohookClaimSubmissions(
      6,
      submissionsDueKey(prefix),
      watermarksKey(prefix),
      changesResolvedKey(prefix),
      changesPendingKey(prefix),
      submissionsHeldKey(prefix),
      submissionsHoldingKey(prefix),
      prefix,
      now,
      leaseMs,
      limit,
      HELD_AT_MOST_MS,
    );
  }

  /** The parts of a submission. */
  async read(submission: string, now = Date.now()): Promise<SubmissionParts> {
    const [parents, lastParents] = this.#parentsKeys(now);
    const [[, fields], [, ref], [, lastRef]] = ((await this.#redis
      .multi()
      .hgetall(submissionPartsKey(this.#prefix, submission))
      .hget(parents, submission)
      .hget(lastParents, submission)
      .exec()) ?? []) as [[unknown, Record<string, string>], [unknown, string | null], [unknown, string | null]];
    const kept = ref ?? lastRef;
    const parts: SubmissionParts = {
      parent: undefined,
      parentRef: kept === null ? undefined : decodeParentRef(kept),
      related: [],
      attachments: [],
      survey123: fields.survey123 === '1',
    };
    for (const [field, json] of Object.entries(fields)) {
      if (field === 'parent') parts.parent = JSON.parse(json) as ParentPart;
      else if (field.startsWith('r:')) parts.related.push(JSON.parse(json) as SubmissionFeature);
      else if (field.startsWith('a:')) parts.attachments.push(JSON.parse(json) as AttachmentEntry & { layer: number });
    }
    return parts;
  }

  /**
   * A submission closed (written, or not one): out of the due set, its parent out of the GlobalID index; its parts
   * kept a while for late parts to find it closed.
   */
  async finish(submission: string, parentOf: string | undefined, now = Date.now()): Promise<void> {
    const multi = this.#redis.multi().zrem(submissionsDueKey(this.#prefix), submission);
    if (parentOf !== undefined) for (const key of this.#parentsKeys(now)) multi.hdel(key, `g:${parentOf}`);
    await multi.exec();
  }
}
