import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { Queue, QueueEvents, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import type { StoredEvent } from '../../src/events/envelope.js';
import { readableJobData } from '../../src/events/stored-event.js';
import { acceptLua } from '../../src/queue/accept-script.js';
import { confirmJobOptions } from '../../src/queue/backfill-jobs.js';
import { EventQueue } from '../../src/queue/event-queue.js';
import { BULLMQ_VERSION, JobScript, type EventWrite, type RangesWrite } from '../../src/queue/job-script.js';
import { allQueueNames } from '../../src/queue/names.js';
import { createProducerConnection } from '../../src/redis/connection.js';
import {
  activityKey,
  aheadKey,
  changesOriginsKey,
  dedupKey,
  gapsKey,
  eventLogKey,
  serverGensKey,
  watermarksKey,
} from '../../src/redis/keys.js';
import { accepted, envelopeOf } from '../helpers/envelope.js';
import { repoPath } from '../helpers/paths.js';
import { uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';

const redis = await startRedis(t);
const raw = new Redis(redis.url);
t.teardown(() => raw.disconnect());

/** Everything BullMQ's `addStandardJob` writes for jobs `jobIds` of `queueName` under `prefix`, the stream ids left out. */
async function written(prefix: string, jobIds: readonly string[], queueName = 'gp-events'): Promise<Record<string, unknown>> {
  const queue = `${prefix}:${queueName}`;
  const events = (await raw.xrange(`${queue}:events`, '-', '+')).map(([, fields]) => fields);
  return {
    jobs: await Promise.all(jobIds.map((jobId) => raw.hgetall(`${queue}:${jobId}`))),
    wait: await raw.lrange(`${queue}:wait`, 0, -1),
    marker: await raw.call('ZRANGE', `${queue}:marker`, '0', '-1', 'WITHSCORES'),
    id: await raw.get(`${queue}:id`),
    meta: await raw.hgetall(`${queue}:meta`),
    events,
  };
}

/** Checks that `mine` and `theirs` (of {@link written}) are the same, the jobs' times within 5 s of each other. */
function sameWrites(
  t: Test,
  mine: Record<string, unknown>,
  theirs: Record<string, unknown>,
  dataOf = (text: string): unknown => text,
): void {
  const [myJobs, theirJobs] = [mine.jobs, theirs.jobs] as Record<string, string>[][];
  t.equal(myJobs!.length, theirJobs!.length);
  myJobs!.forEach((myHash, index) => {
    const { timestamp: myTimestamp, data: myData, ...myJob } = myHash;
    const { timestamp: theirTimestamp, data: theirData, ...theirJob } = theirJobs![index]!;
    t.same(Object.keys(myHash).sort(), Object.keys(theirJobs![index]!).sort(), `job ${index}: the same hash fields`);
    t.same(myJob, theirJob, `job ${index}: name, opts, delay, priority: the same text`);
    t.same(dataOf(myData!), dataOf(theirData!), `job ${index}: the same data`);
    t.ok(Math.abs(Number(myTimestamp) - Number(theirTimestamp)) < 5000, `job ${index}: times of the same moment`);
  });
  for (const part of ['wait', 'marker', 'id', 'meta', 'events'] as const) t.same(mine[part], theirs[part], `${part}: the same`);
}

/** An event queue and, beside it, the BullMQ queues `queue.add` writes the reference jobs to. */
async function setUp(
  t: Test,
  gapDelayMs = 0,
): Promise<{ eventQueue: EventQueue; script: JobScript; reference: (name: string) => Queue; prefixes: [string, string] }> {
  const ours = uniquePrefix();
  const bullmqs = uniquePrefix();
  const connection = createProducerConnection(redis.url);
  const eventQueue = new EventQueue({ connection, prefix: ours });
  await eventQueue.ready();
  const backfillQueue = eventQueue.backfillQueue();
  const script = new JobScript(connection, {
    queues: allQueueNames.map((name) => eventQueue.queue(name)),
    backfillQueue,
    watermarksKey: watermarksKey(ours),
    activityKey: activityKey(ours),
    serverGensKey: serverGensKey(ours),
    aheadKey: aheadKey(ours),
    gapsKey: gapsKey(ours),
    eventLogKey: eventLogKey(ours),
    originsKey: changesOriginsKey(ours),
    dedupKeyPrefix: dedupKey(ours, ''),
    dedupMs: 60_000,
    gapDelayMs,
  });
  const references = new Map<string, Queue>();
  const reference = (name: string): Queue => {
    const defaultJobOptions =
      name === backfillQueue.name ? backfillQueue.defaultJobOptions : eventQueue.queue('gp-events').defaultJobOptions;
    if (!references.has(name)) references.set(name, new Queue(name, { connection, prefix: bullmqs, defaultJobOptions }));
    return references.get(name)!;
  };
  t.teardown(async () => {
    await Promise.all([...references.values()].map((queue) => queue.close()));
    await eventQueue.close();
    connection.disconnect();
  });
  return { eventQueue, script, reference, prefixes: [ours, bullmqs] };
}

const requestOf = (event: StoredEvent): EventWrite => ({
  queue: 0,
  eventId: event.id,
  hook: event.hook,
  name: event.type,
  data: JSON.stringify(event),
  ranges: [],
  activity: undefined,
});

t.test('the scripts that write jobs are .lua files, copied beside the compiled modules; no .ts file of src/ holds their Lua', async (t) => {
  const sources = (readdirSync(repoPath('src'), { recursive: true }) as string[]).filter((file) => file.endsWith('.ts'));
  t.ok(sources.length > 50);
  t.same(
    sources.filter((file) => /local function addJob|rcall\('LPUSH'/.test(readFileSync(repoPath('src', file), 'utf8'))),
    [],
  );
  t.match(readFileSync(repoPath('src/queue/bullmq-jobs.lua'), 'utf8'), /local function addJob/);
  // Both scripts include BullMQ's job writes, and the loaded accept script holds them.
  for (const script of ['src/queue/accept-jobs.lua', 'src/fanout/fanout.lua'])
    t.match(readFileSync(repoPath(script), 'utf8'), /^-- @include bullmq-jobs\.lua$/m, script);
  t.match(acceptLua, /local function addJob/);
  t.notMatch(acceptLua, /@include/);
});

t.test('each new event, and no repeat, is appended to the event log in the call that stores it: its job id and data', async (t) => {
  const { script, prefixes } = await setUp(t);
  const [first, second] = [envelopeOf('gp'), envelopeOf('gp')];
  t.same(await script.write([requestOf(first), requestOf(second), requestOf(first)]), [1, 1, 0]);
  t.same(await script.write([requestOf(second)]), [0]);
  const connection = new Redis(redis.url);
  t.teardown(() => connection.disconnect());
  const entries = await connection.xrange(eventLogKey(prefixes[0]), '-', '+');
  t.same(
    entries.map(([, fields]) => fields),
    [first, second].map((event) => ['j', event.id, 'd', JSON.stringify(event)]),
  );
});

t.test('package.json pins bullmq to exactly the release whose layout the script writes', async (t) => {
  const pkg = JSON.parse(readFileSync(repoPath('package.json'), 'utf8')) as { dependencies: Record<string, string> };
  t.equal(pkg.dependencies.bullmq, BULLMQ_VERSION);
});

for (const paused of [false, true]) {
  t.test(
    `jobs written by one call of geohook's script equal those written by queue.add, field by field${paused ? ', on a paused queue' : ''}`,
    async (t) => {
      const { eventQueue, script, reference, prefixes } = await setUp(t);
      if (paused) await Promise.all([eventQueue.queue('gp-events').pause(), reference('gp-events').pause()]);
      const events = Array.from({ length: 5 }, () => envelopeOf('gp'));
      t.same(await script.write(events.map(requestOf)), [1, 1, 1, 1, 1], 'one call, five new jobs');
      for (const event of events) await reference('gp-events').add(event.type, event, { jobId: event.id });

      const ids = events.map((event) => event.id);
      const [mine, theirs] = await Promise.all(prefixes.map((prefix) => written(prefix, ids)));
      sameWrites(t, mine!, theirs!);
      t.match((mine!.jobs as Record<string, string>[])[0]!.opts, /"jobId":"[0-9a-f]{64}"/, 'opts name the job id, as queue.add does');
      const markers = await raw.zcard(`${prefixes[0]}:gp-events:marker`);
      t.equal(markers, paused ? 0 : 1, paused ? 'no marker on a paused queue' : 'the marker for the workers');
    },
  );
}

t.test("a gap written by geohook's script equals the backfill job queue.add writes", async (t) => {
  const { script, reference, prefixes } = await setUp(t);
  const range = (from: number, to: number): RangesWrite => ({
    operation: 'reserve',
    hook: 'default',
    ranges: [
      {
        scope: 'default Hosted/Parcels.FeatureServer',
        from,
        to,
        serviceUrl: 'http://gis.test/arcgis/rest/services/Hosted/Parcels/FeatureServer',
      },
    ],
  });
  await script.write([range(10, 12), range(20, 25)]);
  const [gapId] = (await raw.lrange(`${prefixes[0]}:backfill:wait`, 0, -1)) as [string];
  t.match(gapId, /^gap-[0-9a-f]{40}$/, 'the gap between generations 12 and 20 is a job');
  const gap = JSON.parse((await raw.hget(`${prefixes[0]}:backfill:${gapId}`, 'data'))!) as unknown;
  t.match(gap, { scope: 'default Hosted/Parcels.FeatureServer', hook: 'default', from: '12', to: '20' });
  await reference('backfill').add('gap', gap, { jobId: gapId });

  const [mine, theirs] = await Promise.all(prefixes.map((prefix) => written(prefix, [gapId], 'backfill')));
  sameWrites(t, mine!, theirs!, (text) => JSON.parse(text) as unknown);
});

t.test("a confirm job written by geohook's script equals the one queue.add writes with its options", async (t) => {
  const { script, reference, prefixes } = await setUp(t);
  const scope = 'default Hosted/Parcels.FeatureServer';
  const serviceUrl = 'http://gis.test/arcgis/rest/services/Hosted/Parcels/FeatureServer';
  // A delivered range, no server generation known: it waits, and a confirm job goes to read the server.
  const delivered: EventWrite = { ...requestOf(envelopeOf('feature')), queue: 1, ranges: [{ scope, from: 10, to: 12, serviceUrl }] };
  t.same(await script.write([delivered]), [1]);
  const [jobId, ...more] = (await raw.lrange(`${prefixes[0]}:backfill:wait`, 0, -1)) as [string];
  t.same(more, [], 'one job');
  t.equal(jobId, `confirm-${createHash('sha1').update(scope).digest('hex')}`);
  const data = JSON.parse((await raw.hget(`${prefixes[0]}:backfill:${jobId}`, 'data'))!) as unknown;
  t.same(data, { scope, hook: 'default', serviceUrl });
  await reference('backfill').add('confirm', data, { ...confirmJobOptions, jobId });

  const [mine, theirs] = await Promise.all(prefixes.map((prefix) => written(prefix, [jobId], 'backfill')));
  sameWrites(t, mine!, theirs!, (text) => JSON.parse(text) as unknown);
  t.same(await script.write([{ ...delivered, eventId: 'f'.repeat(64), ranges: [{ scope, from: 12, to: 13, serviceUrl }] }]), [1]);
  t.equal(await raw.llen(`${prefixes[0]}:backfill:wait`), 1, 'while it waits, no second one');
});

t.test("BullMQ's Worker and QueueEvents, and the dashboard, take such a job as their own", async (t) => {
  const prefix = uniquePrefix();
  const connection = createProducerConnection(redis.url);
  const eventQueue = new EventQueue({ connection, prefix });
  await eventQueue.ready();
  // From the stream's start: events written before its first read count too.
  const queueEvents = new QueueEvents('gp-events', { connection: { url: redis.url }, prefix, lastEventId: '0-0' });
  await queueEvents.waitUntilReady();
  const seen: string[] = [];
  const event = envelopeOf('gp');
  const completed = new Promise<void>((resolve) => {
    for (const name of ['added', 'waiting', 'active', 'completed'] as const) {
      queueEvents.on(name, ({ jobId }: { jobId: string }) => {
        if (jobId !== event.id) return;
        seen.push(name);
        if (name === 'completed') resolve();
      });
    }
  });
  const processed: unknown[] = [];
  const worker = new Worker(
    'gp-events',
    async (job) => {
      processed.push({ id: job.id, name: job.name, data: job.data, attempts: job.opts.attempts });
      return 'done';
    },
    { connection: { url: redis.url }, prefix },
  );
  t.teardown(async () => {
    await worker.close();
    await queueEvents.close();
    await eventQueue.close();
    connection.disconnect();
  });
  await eventQueue.enqueue(accepted(event));
  await completed;
  t.same(processed, [{ id: event.id, name: event.type, data: event, attempts: 5 }], 'the Worker ran it once, with its data');
  t.same(seen, ['added', 'waiting', 'active', 'completed'], 'QueueEvents saw its whole life');

  const adapter = new BullMQAdapter(eventQueue.queue('gp-events'));
  t.match(await adapter.getJobCounts(), { completed: 1 }, 'the dashboard counts it');
  const [shown] = await adapter.getJobs(['completed'], 0, 10);
  t.equal(shown?.id, event.id, 'and lists it');
  t.match(readableJobData(shown?.data), {
    id: event.id,
    payload: JSON.parse(event.body),
  });
});

t.test(
  "a delayed gap written by geohook's script equals the job queue.add writes with that delay; a late delivery removes it as BullMQ would",
  async (t) => {
    const { script, reference, prefixes } = await setUp(t, 1500);
    const scope = 'default Hosted/Parcels.FeatureServer';
    const serviceUrl = 'http://gis.test/arcgis/rest/services/Hosted/Parcels/FeatureServer';
    const event = (from: number, to: number): EventWrite => ({
      ...requestOf(envelopeOf('feature')),
      queue: 1,
      ranges: [{ scope, from, to, serviceUrl }],
    });
    t.same(await script.write([{ operation: 'confirm', hook: 'default', ranges: [{ scope, from: 50, to: 50, serviceUrl }] }]), ['0\n']);
    t.same(await script.write([event(10, 11), event(20, 21)]), [1, 1]);
    t.same(await raw.llen(`${prefixes[0]}:backfill:wait`), 0, 'nothing waiting');
    const [gapId] = (await raw.zrange(`${prefixes[0]}:backfill:delayed`, '0', '-1')) as [string];
    t.match(gapId, /^gap-[0-9a-f]{40}$/, 'the gap is delayed');
    const gap = JSON.parse((await raw.hget(`${prefixes[0]}:backfill:${gapId}`, 'data'))!) as unknown;
    t.same(gap, { scope, hook: 'default', serviceUrl, from: '11', to: '20' });
    await reference('backfill').add('gap', gap, { jobId: gapId, delay: 1500 });

    const [mine, theirs] = await Promise.all(prefixes.map((prefix) => written(prefix, [gapId], 'backfill')));
    // The times differ by the moment each was written: each is compared within 5 s, the rest exactly.
    const due = async (prefix: string) => {
      const [, score] = await raw.zrange(`${prefix}:backfill:delayed`, '0', '-1', 'WITHSCORES');
      return Number(score) / 0x1000;
    };
    const [myDue, theirDue] = await Promise.all(prefixes.map(due));
    t.ok(Math.abs(myDue! - theirDue!) < 5000, 'due at the same moment');
    const [myMarker, theirMarker] = [mine!.marker, theirs!.marker].map((marker) => (marker as string[]).flat());
    t.equal(myMarker![0], theirMarker![0]);
    t.equal(Number(myMarker![1]), myDue, 'the marker says when');
    const streamOf = (events: unknown) => (events as string[][]).map((fields) => fields.filter((_, i) => fields[i - 1] !== 'delay'));
    t.same(streamOf(mine!.events), streamOf(theirs!.events), 'events: the same but for the due time');
    sameWrites(t, { ...mine!, marker: [], events: [] }, { ...theirs!, marker: [], events: [] }, (text) => JSON.parse(text) as unknown);

    // A late delivery covering the whole gap: the job goes, as BullMQ's removeJob takes a delayed job away.
    await reference('backfill').remove(gapId);
    const fill: EventWrite = { ...event(11, 20) };
    t.same(await script.write([fill]), [1]);
    const [afterMine, afterTheirs] = await Promise.all(prefixes.map((prefix) => written(prefix, [gapId], 'backfill')));
    t.same(afterMine!.jobs, [{}], 'no job hash');
    t.same(await raw.zcard(`${prefixes[0]}:backfill:delayed`), 0, 'not delayed');
    t.same(streamOf(afterMine!.events), streamOf(afterTheirs!.events), "the stream says 'removed', as BullMQ's");
  },
);
