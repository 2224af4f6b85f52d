import { readFileSync } from 'node:fs';

/** The line a script that writes BullMQ jobs itself puts where `bullmq-jobs.lua` (beside this module) belongs. */
const INCLUDE = '-- @include bullmq-jobs.lua';

const bullmqJobsLua = readFileSync(new URL('./bullmq-jobs.lua', import.meta.url), 'utf8');

/** `script` with BullMQ's job writes (`prepare`, `addJob`, `removeJob`) in place of its include line. */
export function withBullmqJobs(script: string): string {
  if (!script.includes(INCLUDE)) throw new Error(`a script that writes jobs marks where they go with "${INCLUDE}"`);
  return script.replace(INCLUDE, () => bullmqJobsLua);
}
