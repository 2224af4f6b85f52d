import { cleanUp, startTool } from '../cleanup.js';
import type { Durability } from './fault-redis.js';
import { formatRows, type FaultName, type FaultRow } from './fault-row.js';
import { parseOptions, usage } from './options.js';
import type { ScenarioOptions } from './scenario.js';
import { runChangesKill } from './scenarios/changes-kill.js';
import { runEmulatorRetry } from './scenarios/emulator-retry.js';
import { runMirrorKill } from './scenarios/mirror-kill.js';
import { runReceiverKill } from './scenarios/receiver-kill.js';
import { runRedisKill } from './scenarios/redis-kill.js';
import { runRedisOutage } from './scenarios/redis-outage.js';
import { runRelayFault } from './scenarios/relay-kill.js';
import { runStreamsFault } from './scenarios/streams-fault.js';
import { runSubmissionsKill } from './scenarios/submissions-kill.js';
import { runSubscriptionsFault } from './scenarios/subscriptions-kill.js';

/**
 * `npm run test:faults`: each fault on a fresh redis-server and its own receiver process, under a load of
 * distinct signed deliveries; afterwards every acknowledged delivery must be one job in Redis. The change-event
 * faults add features in one generation instead; every feature must be one change event. Progress goes
 * to stderr, the table (or `--json`) to stdout; the exit code is 1 when a promise was broken.
 */

const log = (line: string): void => {
  process.stderr.write(`faults: ${line}\n`);
};

/** The runs of a fault, one per row: redis-kill runs on both durabilities, changes-redis-kill and subscriptions on strict, the others on fast. */
function runsOf(fault: FaultName, options: ScenarioOptions): [Durability, () => Promise<FaultRow>][] {
  switch (fault) {
    case 'receiver-kill':
      return [['fast', () => runReceiverKill(options)]];
    case 'redis-kill':
      return [
        ['strict', () => runRedisKill(options, 'strict')],
        ['fast', () => runRedisKill(options, 'fast')],
      ];
    case 'redis-outage':
      return [['fast', () => runRedisOutage(options, false)]];
    case 'redis-outage-spool':
      return [['fast', () => runRedisOutage(options, true)]];
    case 'emulator-retry':
      return [['fast', () => runEmulatorRetry(options)]];
    case 'changes-resolver-kill':
      return [['fast', () => runChangesKill(options, 'receiver', 'fast')]];
    case 'changes-redis-kill':
      return [['strict', () => runChangesKill(options, 'redis', 'strict')]];
    case 'relay-kill':
    case 'relay-sink-outage':
      return [['fast', () => runRelayFault(options, fault)]];
    case 'mirror-kill':
      return [['fast', () => runMirrorKill(options)]];
    case 'submissions-kill':
      return [['fast', () => runSubmissionsKill(options)]];
    case 'subscriptions':
      return [['strict', () => runSubscriptionsFault(options)]];
    case 'stream-nats-kill':
    case 'stream-nats-restart':
    case 'stream-amqp-kill':
    case 'stream-amqp-restart':
      return [['fast', () => runStreamsFault(options, fault)]];
  }
}

/** Runs `fault`; a scenario that throws gives a row whose problem says so. */
async function runFault(fault: FaultName, options: ScenarioOptions): Promise<FaultRow[]> {
  const rows: FaultRow[] = [];
  for (const [durability, run] of runsOf(fault, options)) {
    const startedAtMs = Date.now();
    log(`${fault} (${durability}): starting`);
    const row = await run().catch((err: unknown): FaultRow => ({
      fault,
      durability,
      sent: 0,
      acknowledged: 0,
      found: 0,
      lost: 0,
      duplicated: 0,
      zeroLossExpected: true,
      notes: 'the scenario failed',
      problems: [`the scenario failed: ${(err as Error).stack ?? String(err)}`],
    }));
    log(
      `${fault} (${durability}): done in ${((Date.now() - startedAtMs) / 1000).toFixed(1)} s: ${row.acknowledged}/${row.sent} acknowledged, ${row.lost} lost, ${row.duplicated} duplicated`,
    );
    rows.push(row);
  }
  return rows;
}

async function main(): Promise<number> {
  const options = await startTool(parseOptions, usage, log);
  if (typeof options === 'number') return options;
  const startedAtMs = Date.now();
  const scenarioOptions: ScenarioOptions = { ...options, log };
  const rows: FaultRow[] = [];
  for (const fault of options.only) rows.push(...(await runFault(fault, scenarioOptions)));
  const broken = rows.filter((row) => row.problems.length > 0);
  log(
    `${rows.length} rows in ${((Date.now() - startedAtMs) / 1000).toFixed(1)} s; ${broken.length === 0 ? 'no promise broken' : `${broken.length} with a broken promise (their directories are kept)`}`,
  );
  process.stdout.write(options.json ? `${JSON.stringify(rows)}\n` : `${formatRows(rows)}\n`);
  return broken.length === 0 ? 0 : 1;
}

// Exits explicitly: fetch's keep-alive sockets and the like must not hold the process open.
main().then(
  (code) => process.exit(code),
  async (err: unknown) => {
    log(`fatal: ${(err as Error).stack ?? String(err)}`);
    await cleanUp();
    process.exit(1);
  },
);
