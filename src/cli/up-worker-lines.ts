import { join } from 'node:path';
import { DEFAULT_PREFIX } from '../config/defaults.js';
import { EMBEDDED_REDIS_DIR } from '../embedded/recorded-redis-url.js';

/** The subscription `geohook up` suggests for the user's first worker. */
export const WORKER_SUBSCRIPTION = 'my-app';

/** What {@link upWorkerLines} needs to know of the running `geohook up`. */
export interface UpWorkerContext {
  /** Its working directory, where its embedded Redis records its URL. */
  readonly cwd: string;
  /** True when it runs its own redis-server (no REDIS_URL, Sentinel or Cluster configured). */
  readonly embeddedRedis: boolean;
  readonly prefix: string;
  /** True when {@link WORKER_SUBSCRIPTION} exists already (an earlier run made it): the line only reads it. */
  readonly subscriptionExists: boolean;
}

/** `value` as one shell word: as it is when it holds nothing a shell reads, else single-quoted. */
const shellWord = (value: string): string => (/^[\w./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`);

/**
 * The banner lines that attach a worker to a running `geohook up`, each one copy-paste away: the command for another
 * shell in the same folder (`geohook consume` finds the embedded Redis there by itself), and with the embedded Redis
 * the environment of a Node worker anywhere (REDIS_URL read from the file `up` records, password included).
 */
export function upWorkerLines({ cwd, embeddedRedis, prefix, subscriptionExists }: UpWorkerContext): string[] {
  const prefixFlag = prefix === DEFAULT_PREFIX ? '' : ` --prefix ${shellWord(prefix)}`;
  const consume = `npx geohook consume --subscription ${WORKER_SUBSCRIPTION}${prefixFlag}`;
  const create = `npx geohook subscriptions create ${WORKER_SUBSCRIPTION} --types 'gp.*,feature.*,change.*'${prefixFlag}`;
  const command = subscriptionExists ? consume : `${create} && ${consume}`;
  const code = `subscribe({ subscription: '${WORKER_SUBSCRIPTION}', handlers })`;
  if (!embeddedRedis) return [`worker     ${command}  (with the same REDIS_URL or GEOHOOK_CONFIG; in Node: ${code})`];
  const urlFile = shellWord(join(cwd, EMBEDDED_REDIS_DIR, 'url'));
  return [
    `worker     ${command}  (another shell, this folder)`,
    `in Node    REDIS_URL="$(cat ${urlFile})" node worker.mjs  (worker.mjs: ${code}; in this folder it finds this Redis by itself)`,
  ];
}
