import { readFileSync } from 'node:fs';
import { withBullmqJobs } from './bullmq-jobs.js';

/** Queues the script writes to: the three event queues, then the backfill queue. */
const SCRIPT_QUEUES = 4;

/** Values per request in ARGV. */
const PER_REQUEST = 8;

/** Values in ARGV before the requests': nine settings, then the key prefix of each queue. */
const HEADER = 9 + SCRIPT_QUEUES;

/** What a request asks of the script, in its first value (the event queues are 1 to 3). */
export const Operation = {
  /** Ranges the server reported itself (`changeTrackingInfo`): they raise the server generations and count. */
  reserve: 0,
  /** A server generation read to confirm the ranges waiting ahead of it: raised, without counting a range. */
  confirm: -1,
} as const;

/** Longest list of ranges one scope may have waiting for its server (a bound on what invented ranges can hold). */
const MAX_AHEAD = 1000;

/**
 * Most scopes with ranges waiting for their server: past it, a range of a scope whose server was never read (an
 * invented service, a key holder's) is not kept and costs the server no read; scopes read before still wait.
 */
const MAX_WAITING_SCOPES = 1000;

/**
 * Most gaps listed per scope for deliveries to fill (those a worker took are dropped when it is full): a gap
 * past it is filled by the backfill alone.
 */
const MAX_GAPS = 100;

/**
 * Most origin lines kept per scope (`<prefix>:changes:origins`): a scope whose change events lag further (or are not
 * followed) loses its oldest, whose generations then take the next line's origin.
 */
const MAX_ORIGINS = 64;

/** Most services the activity hash records: a new one past this is not recorded (a bound on invented names). */
const MAX_ACTIVITY_FIELDS = 10_000;

/**
 * A gap's job data, as the accept script writes it (`addGap`): the generations in `(from, to]` of `scope` (numbers
 * as text). A delivery that comes before a worker takes the job takes its range out: the job is then replaced by
 * one per part left.
 */
export interface GapJobData {
  scope: string;
  hook: string;
  serviceUrl: string;
  from: string;
  to: string;
  /** Set when the gap was found by polling: its event says `source: "poll"`. */
  source?: 'poll';
}

/** A confirm job's data, as the accept script writes it (`pend`): the scope whose ranges wait, and where its service is read. */
export interface ConfirmJobData {
  scope: string;
  hook: string;
  serviceUrl: string;
}

/** The constants of the script, declared as Lua locals before its text. */
const constants = {
  SCRIPT_QUEUES,
  HEADER,
  PER_REQUEST,
  RESERVE: Operation.reserve,
  CONFIRM: Operation.confirm,
  MAX_AHEAD,
  MAX_WAITING_SCOPES,
  MAX_GAPS,
  MAX_ACTIVITY_FIELDS,
  MAX_ORIGINS,
};

/**
 * The accept script (`accept-jobs.lua`, beside this module; its header says what it does, its KEYS and ARGV):
 * per event, a repeat, a range handed over already, or a new BullMQ job with its ranges tracked and its gaps
 * queued; ranges alone with {@link Operation}.
 */
export const acceptLua =
  Object.entries(constants)
    .map(([name, value]) => `local ${name} = ${value}\n`)
    .join('') + withBullmqJobs(readFileSync(new URL('./accept-jobs.lua', import.meta.url), 'utf8'));
