import type { Command } from 'commander';
import type { FastifyInstance } from 'fastify';
import { buildEmulator } from 'geohook/emulator';
import pino from 'pino';
import { loadConfig, type AdminConfig } from '../config/load-config.js';
import { createLoggerOptions } from '../logger.js';
import { describeTarget } from '../redis/connection.js';
import { startServer, type RunningServer } from '../server.js';
import { closeOnSignal } from './close-on-signal.js';
import { addConfigOptions, configOverrides } from './config-options.js';
import { startEventPrinter } from './event-printer.js';
import { printNotice } from './print.js';

/** The services `geohook up` registers on in its own emulator. */
const DEMO_SERVICES = ['Tools/Buffer.GPServer', 'Hosted/Parcels.FeatureServer'];

async function waitForRegistration(reason: () => string | undefined, timeoutMs: number): Promise<string | undefined> {
  const deadline = Date.now() + timeoutMs;
  while (reason() !== undefined && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  return reason();
}

/**
 * `geohook up`: everything on one machine. An embedded redis-server when REDIS_URL is unset, the emulator
 * (on EMULATOR_PORT) when ADMIN_URL is unset, the receiver registered on the emulator's Buffer and Parcels
 * services, and a consumer printing each event as a JSON line on stdout; logs and notices go to stderr.
 */
async function runUp(options: Record<string, string | undefined>): Promise<void> {
  const config = loadConfig(process.env, configOverrides(options));
  const logger = pino(createLoggerOptions({ level: config.logLevel, signatureHeaders: config.signatureHeaders }), pino.destination({ fd: 2, sync: false }));

  let emulator: FastifyInstance | undefined;
  let admin: AdminConfig | undefined = config.admin;
  if (admin === undefined) {
    const emulatorUrl = `http://127.0.0.1:${config.emulatorPort}`;
    emulator = await buildEmulator({ publicUrl: emulatorUrl, loggerInstance: logger.child({ component: 'emulator' }) });
    await emulator.listen({ host: '127.0.0.1', port: config.emulatorPort });
    admin = {
      url: `${emulatorUrl}/arcgis/admin`,
      auth: { username: 'admin', password: 'admin.pass' },
      register: DEMO_SERVICES,
      changeTypes: ['*'],
      settings: undefined,
      placement: {},
    };
  }
  let server: RunningServer;
  try {
    server = await startServer({ ...config, admin }, { logger });
  } catch (err) {
    await emulator?.close(); // or its listening socket keeps the process alive after the error
    throw err;
  }
  const printer = startEventPrinter({ redis: server.redisTarget, prefix: config.prefix, metrics: server.app.metricsRegistry, logger });
  closeOnSignal(logger, async () => {
    await printer.close();
    await server.close();
    await emulator?.close();
  });

  const pending = server.registration === undefined ? undefined : await waitForRegistration(() => server.registration!.notReadyReason(), 15_000);
  printNotice(`receiver   ${config.publicUrl}/webhooks/default  (Redis ${server.redis?.url ?? describeTarget(server.redisTarget)})`);
  if (emulator !== undefined) {
    const emulatorUrl = `http://127.0.0.1:${config.emulatorPort}`;
    printNotice(`emulator   ${emulatorUrl}/arcgis/admin  (users admin/admin.pass, orgadmin/orgadmin.pass)`);
    printNotice(`fire a GP job:  curl -s -X POST ${emulatorUrl}/emulator/services/Tools/Buffer.GPServer/jobs -H 'content-type: application/json' -d '{"outcome":"succeeded"}'`);
    printNotice(`edit a feature: curl -s -X POST ${emulatorUrl}/emulator/services/Hosted/Parcels.FeatureServer/edits -H 'content-type: application/json' -d '{"changeType":"FeaturesCreated"}'`);
  }
  printNotice(pending === undefined ? 'ready: events are printed below as JSON lines; Ctrl-C stops everything' : `not ready yet: ${pending}`);
}

/** `geohook up`, what `npm start` runs. */
export function registerUp(command: Command): void {
  addConfigOptions(command).action((options: Record<string, string | undefined>) => runUp(options));
}
