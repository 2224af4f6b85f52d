import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { PARCELS, postForm } from '../emulator-features.js';
import { notifyParent, serveParent } from '../ipc.js';

/** What the floor measured. */
export interface FloorResult {
  /** Rows read from the change file and added as jobs. */
  rows: number;
  /** Jobs the queue holds afterwards (as many as rows, when it is right). */
  jobs: number;
  /** From the `extractChanges` request to the last `addBulk` answered. */
  seconds: number;
  /** Its parts: until the result file was downloaded, its `JSON.parse`, the `addBulk` calls. */
  extractSeconds: number;
  parseSeconds: number;
  addSeconds: number;
  resultMiB: number;
  /** CPU this process spent over `seconds`, ms. */
  cpuMs: number;
}

/** Jobs per `addBulk`: the change writer's batch. */
const BATCH = 500;

/**
 * The physical floor of change events, in a process of its own: the asynchronous `extractChanges` of a range
 * (its status polled, its result file downloaded from the storage path), `JSON.parse`, and `queue.addBulk` of
 * every row into a fresh BullMQ queue, 500 at a time; nothing else. Started with `{emulatorRoot, redisUrl,
 * serverGens}` as JSON.
 */
const { emulatorRoot, redisUrl, serverGens } = JSON.parse(process.argv[2] ?? '{}') as {
  emulatorRoot: string;
  redisUrl: string;
  serverGens: [number, number];
};
const { token } = (await postForm(`${emulatorRoot}/arcgis/sharing/rest/generateToken`, { username: 'admin', password: 'admin.pass' })) as {
  token: string;
};
const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
const queue = new Queue('change-floor', { connection, prefix: 'floor' });
await queue.waitUntilReady();

async function run(): Promise<FloorResult> {
  const cpuBefore = process.cpuUsage();
  const startedAtMs = performance.now();
  const { statusUrl } = (await postForm(`${emulatorRoot}/${PARCELS}/extractChanges`, {
    token,
    serverGens: JSON.stringify(serverGens),
    layers: '[0]',
    returnInserts: 'true',
    returnUpdates: 'true',
    returnDeletes: 'true',
    returnAttachments: 'false',
    async: 'true',
  })) as { statusUrl: string };
  let status: Record<string, unknown>;
  for (;;) {
    status = await postForm(statusUrl, { token });
    if (status.status !== 'InProgress') break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  if (status.status !== 'Completed') throw new Error(`extractChanges ended ${JSON.stringify(status)}`);
  const text = await (await fetch(String(status.resultUrl))).text();
  const downloadedAtMs = performance.now();
  const answer = JSON.parse(text) as { edits: { features: { adds?: unknown[]; updates?: unknown[] } }[] };
  const rows = answer.edits.flatMap(({ features }) => [...(features.adds ?? []), ...(features.updates ?? [])]);
  const parsedAtMs = performance.now();
  for (let start = 0; start < rows.length; start += BATCH) {
    await queue.addBulk(rows.slice(start, start + BATCH).map((row) => ({ name: 'change.created', data: row })));
  }
  const doneAtMs = performance.now();
  const cpu = process.cpuUsage(cpuBefore);
  return {
    rows: rows.length,
    jobs: await queue.getWaitingCount(),
    seconds: (doneAtMs - startedAtMs) / 1000,
    extractSeconds: (downloadedAtMs - startedAtMs) / 1000,
    parseSeconds: (parsedAtMs - downloadedAtMs) / 1000,
    addSeconds: (doneAtMs - parsedAtMs) / 1000,
    resultMiB: Buffer.byteLength(text) / 1_048_576,
    cpuMs: (cpu.user + cpu.system) / 1000,
  };
}

serveParent({
  run,
  close: async () => {
    await queue.close();
    await connection.quit();
  },
});
notifyParent('ready');
