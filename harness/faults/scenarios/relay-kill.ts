import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { makeTempDir, removeTempDir } from '../../cleanup.js';
import { reservePort } from '../../reserved-ports.js';
import { listenEmulator } from '../fault-emulator.js';
import type { FaultRow } from '../fault-row.js';
import { RelaySink } from '../relay-sink.js';
import { since, type ScenarioOptions } from '../scenario.js';
import { startStack, withStack, type Stack } from '../stack.js';
import { addFeatures, changesEnv } from './changes-kill.js';

/** How long the killed receiver stays dead before it is started again. */
const DOWN_MS = 1000;
/** The longest wait, after the fault, for every event at every route. */
const DELIVER_TIMEOUT_MS = 120_000;
const SECRET = `whsec_${Buffer.alloc(32, 5).toString('base64')}`;
/** The routes' paths at the sink: a Standard Webhooks route and a Power Automate one, both carrying `webhook-id`. */
const PATHS = ['/standard', '/flow'] as const;

/** What each relay fault does while the burst is relayed, and how it ends. */
const faults = {
  'relay-kill': {
    what: 'geohook serve (receiver, resolver and relay workers) SIGKILLed',
    hurt: (stack: Stack) => stack.receiver.kill(),
    heal: async (stack: Stack) => {
      await sleep(DOWN_MS);
      await stack.receiver.start();
    },
  },
  'relay-sink-outage': {
    what: 'the routes’ endpoint closed',
    hurt: (_stack: Stack, sink: RelaySink) => sink.stop(),
    heal: async (_stack: Stack, sink: RelaySink, outageMs: number) => {
      await sleep(outageMs);
      await sink.start();
    },
  },
} as const;

/** Routes to both paths of `port`, retried every 1, 2, 4… s up to 16 s (an outage of 30 s costs at most 16 s more). */
function relaysConfig(dir: string, port: number): string {
  const retry = { attempts: 30, backoff: { type: 'exponential', delayMs: 1000, jitter: 0.2 } };
  const url = (path: string) => `http://127.0.0.1:${port}${path}`;
  const path = join(dir, 'geohook.json');
  writeFileSync(
    path,
    JSON.stringify({
      relays: [
        { name: 'standard', url: url(PATHS[0]), types: ['change.*'], secret: SECRET, retry },
        {
          name: 'flow',
          url: url(PATHS[1]),
          types: ['change.created'],
          format: 'powerautomate',
          secret: 'a-flow-secret-of-24-chars',
          retry,
        },
      ],
    }),
  );
  return path;
}

/**
 * Relay faults: a receiver follows Parcels' change events with two routes to a sink; `adds` features are added in
 * one generation and, once the first events reach the sink, `relay-kill` SIGKILLs `geohook serve` (its receiver,
 * resolver and relay workers) and starts it again a second later, or `relay-sink-outage` closes the sink for
 * `outageSeconds`. Every feature's event must then reach every route: zero lost by `webhook-id`. Repeats are
 * allowed (delivery is at least once: a try cut short by the kill is tried again) and reported.
 */
export async function runRelayFault(options: ScenarioOptions, fault: keyof typeof faults): Promise<FaultRow> {
  const { what, hurt, heal } = faults[fault];
  const { log } = options;
  const adds = options.relayAdds;
  const { app: emulator, url } = await listenEmulator();
  const configDir = makeTempDir(`${fault}-config`);
  const sink = new RelaySink(await reservePort());
  await sink.start();
  try {
    const env = { ...changesEnv(url), GEOHOOK_CONFIG: relaysConfig(configDir, sink.port) };
    return await withStack(await startStack(fault, 'fast', { env }), options.keepDirs, async (stack) => {
      const startMs = performance.now();
      const added = await addFeatures(url, adds);
      while (sink.distinct(PATHS[0]) === 0) await sleep(5);
      const takenAtFault = sink.distinct(PATHS[0]);
      await hurt(stack, sink);
      const hurtAtMs = since(startMs);
      log(`${fault}: ${what} ${hurtAtMs} ms after the bulk, ${takenAtFault} of ${added} events at the standard route`);
      await heal(stack, sink, options.outageSeconds * 1000);
      const downMs = since(startMs) - hurtAtMs;
      const deadline = Date.now() + DELIVER_TIMEOUT_MS;
      while (PATHS.some((path) => sink.distinct(path) < added) && Date.now() < deadline) await sleep(100);
      const deliveredMs = since(startMs) - hurtAtMs - downMs;
      const lostByRoute = PATHS.map((path) => Math.max(0, added - sink.distinct(path)));
      const lost = Math.max(...lostByRoute);
      const repeats = PATHS.map((path) => sink.repeats(path));
      const problems: string[] = [];
      if (added !== adds) problems.push(`the emulator added ${added} features, not ${adds}`);
      if (takenAtFault >= added) problems.push(`the fault came too late: all ${added} events were relayed already`);
      PATHS.forEach((path, index) => {
        if (lostByRoute[index]! > 0) problems.push(`${lostByRoute[index]} events never reached the route at ${path}`);
      });
      return {
        fault,
        durability: 'fast',
        sent: adds,
        acknowledged: added,
        found: Math.min(...PATHS.map((path) => sink.distinct(path))),
        lost,
        duplicated: 0,
        zeroLossExpected: true,
        writtenAtFault: takenAtFault,
        relayRepeats: repeats.reduce((sum, count) => sum + count, 0),
        notes: [
          `${added} adds in one generation, relayed to 2 routes`,
          `${takenAtFault} events at the standard route when it struck`,
          `${fault === 'relay-kill' ? 'geohook' : 'the endpoint'} down ${(downMs / 1000).toFixed(1)} s`,
          `every event at every route ${(deliveredMs / 1000).toFixed(1)} s after`,
          `${repeats.join(' and ')} repeated tries by webhook-id (at least once)`,
        ].join('; '),
        problems,
      };
    });
  } finally {
    await sink.stop();
    removeTempDir(configDir);
    await emulator.close();
  }
}
