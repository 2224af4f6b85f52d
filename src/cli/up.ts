import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import type { FastifyInstance } from 'fastify';
import { buildEmulator } from 'geohook/emulator';
import { loadConfig, type AdminConfig, type GeohookConfig } from '../config/load-config.js';
import { isLoopbackHost, LOOPBACK_HOST } from '../config/loopback.js';
import { REGISTERED_HOOK } from '../config/self-registration.js';
import { subscriptionExists } from '../consumers/subscribe.js';
import { assertDataDirFree } from '../embedded/dir-lock.js';
import { EMBEDDED_REDIS_DIR } from '../embedded/recorded-redis-url.js';
import { listenFailure } from '../errors.js';
import { serviceNameOf } from '../events/service-activity.js';
import { gpJobIdOf, readableJobData } from '../events/stored-event.js';
import { filteredChange, isChangeEvent, type RoutedEvent } from '../fanout/routed-event.js';
import { tailEventLog } from '../fanout/tail-event-log.js';
import { createLogger, type LogFormat } from '../logger.js';
import { connectRedis, describeTarget, hasConfiguredRedis } from '../redis/connection.js';
import { startServer, type RunningServer } from '../server.js';
import { changeLine } from './change-line.js';
import { closeOnSignal } from './close-on-signal.js';
import { addConfigOptions, configOverrides } from './config-options.js';
import { printJson, printNotice } from './print.js';
import { printMirrorNotice, startUpMirror, upMirrorRecord, type UpMirror } from './up-mirror.js';
import { assertPortsFree } from './up-ports.js';
import { recordUp } from './up-record.js';
import { upWorkerLines, WORKER_SUBSCRIPTION } from './up-worker-lines.js';

/** The services `geohook up` registers on in its own emulator. */
const DEMO_SERVICES = ['Tools/Buffer.GPServer', 'Hosted/Parcels.FeatureServer'];

/** The emulator's administrator, whom the demo registers as, and its organization administrator, whom doctor checks as. */
const DEMO_ADMIN = { username: 'admin', password: 'admin.pass' };
const DEMO_ORG_ADMIN = { username: 'orgadmin', password: 'orgadmin.pass' };

async function waitUntilReady(reason: () => string | undefined, timeoutMs: number): Promise<string | undefined> {
  const deadline = Date.now() + timeoutMs;
  while (reason() !== undefined && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  return reason();
}

/** The log format `geohook up` uses: LOG_FORMAT, else readable lines when a person watches the terminal. */
function logFormatOf(config: GeohookConfig): LogFormat {
  return config.logFormat ?? (process.stdout.isTTY && process.stderr.isTTY ? 'pretty' : 'json');
}

/** One JSON line per event on stdout: a stored event as its consumers get it (its payload parsed, without the base64 bytes). */
const printEvent = (event: RoutedEvent): void => printJson(isChangeEvent(event) ? event : readableJobData(event));

/** The first characters of an event id: enough to tell events apart in a terminal (the JSON lines carry it whole). */
const shortId = (id: string): string => (id.length > 12 ? `${id.slice(0, 12)}…` : id);

/**
 * One readable line per event on stdout, in the format of the log lines (the receiver's "delivery accepted" is then
 * at debug): a GP event names its job.
 */
function eventLines(): (event: RoutedEvent) => void {
  const lines = createLogger({ level: 'info', format: 'pretty', fd: 1 });
  return (event) => {
    if (!('family' in event)) return lines.info({ type: event.type, eventId: shortId(event.id) }, changeLine(filteredChange(event)));
    const jobId = gpJobIdOf(event);
    lines.info(
      { type: event.type, service: serviceNameOf(event), eventId: `${shortId(event.id)}${jobId === undefined ? '' : ` job ${jobId}`}` },
      'event',
    );
  };
}

/**
 * `geohook up`: everything on one machine. An embedded redis-server when REDIS_URL is unset, the emulator
 * (on EMULATOR_PORT) when ADMIN_URL is unset, the receiver (on 127.0.0.1 unless HOST says otherwise, with a
 * notice when it is reachable from other machines) registered on the emulator's Buffer and Parcels
 * services with the dashboard on, and a consumer printing each event on stdout; logs and notices go to
 * stderr. For a person (a terminal, or LOG_FORMAT=pretty) logs and events are readable lines, request logs
 * and the emulator's routine lines are left to LOG_LEVEL=debug; otherwise JSON lines.
 */
async function runUp(options: Record<string, string | undefined>): Promise<void> {
  // The receiver stays on this machine unless HOST (or --host, which reads it) says otherwise.
  const host = options.host?.trim() ? options.host : LOOPBACK_HOST;
  const loaded = loadConfig(process.env, { ...configOverrides(options), HOST: host, EMULATOR_PORT: options.emulatorPort });
  const format = logFormatOf(loaded);
  const forPerson = format === 'pretty';
  const debugging = loaded.logLevel === 'debug' || loaded.logLevel === 'trace';
  const logger = createLogger({ level: loaded.logLevel, signatureHeaders: loaded.signatureHeaders, format, fd: 2 });
  // The dashboard is on, with a token made for this run unless one is configured.
  const dashboardToken = loaded.dashboard === undefined ? randomBytes(24).toString('base64url') : undefined;
  const config: GeohookConfig =
    dashboardToken === undefined ? loaded : { ...loaded, dashboard: { auth: { token: dashboardToken }, changes: 'jobs' } };

  // A second `geohook up` in this folder is refused before its emulator takes a port the first one holds.
  if (!hasConfiguredRedis(config)) assertDataDirFree(resolve(EMBEDDED_REDIS_DIR));
  // Every port in use is said at once (the embedded Redis takes a free one).
  await assertPortsFree([
    { what: 'the receiver', host: config.host, port: config.port, variable: 'PORT', flag: '--port' },
    ...(config.admin === undefined
      ? [{ what: 'the emulator', host: '127.0.0.1', port: config.emulatorPort, variable: 'EMULATOR_PORT', flag: '--emulator-port' }]
      : []),
  ]);
  let emulator: FastifyInstance | undefined;
  let admin: AdminConfig | undefined = config.admin;
  if (admin === undefined) {
    const emulatorUrl = `http://127.0.0.1:${config.emulatorPort}`;
    const emulatorLog = logger.child({ component: 'emulator' }, forPerson && !debugging ? { level: 'warn' } : {});
    const app = await buildEmulator({ publicUrl: emulatorUrl, loggerInstance: emulatorLog, requestLogLevel: forPerson ? 'debug' : 'info' });
    await app.listen({ host: '127.0.0.1', port: config.emulatorPort }).catch(async (err: unknown) => {
      await app.close();
      throw listenFailure(err, 'the emulator', `127.0.0.1:${config.emulatorPort}`, 'EMULATOR_PORT (or --emulator-port)');
    });
    emulator = app;
    admin = {
      url: `${emulatorUrl}/arcgis/admin`,
      auth: DEMO_ADMIN,
      portalUrl: `${emulatorUrl}/arcgis`,
      register: DEMO_SERVICES,
      poll: [],
      pollIntervalSeconds: 30,
      changes: { services: ['Hosted/Parcels.FeatureServer'], track: ['status'], byService: {} },
      changeTypes: ['*'],
      settings: undefined,
      placement: {},
    };
  }
  let server: RunningServer;
  let mirror: UpMirror | undefined;
  try {
    mirror = await startUpMirror(config.mirror, admin, options.mirror !== undefined);
    server = await startServer({ ...config, admin, mirror: mirror.mirror }, { logger, requestLogLevel: forPerson ? 'debug' : 'info' });
  } catch (err) {
    await emulator?.close(); // or its listening socket keeps the process alive after the error
    await mirror?.postgres?.stop();
    throw err;
  }
  // It shows every event without taking any: workers beside `up` get them all (docs/subscriptions.md).
  const printerRedis = connectRedis(server.redisTarget, { maxRetriesPerRequest: null });
  printerRedis.on('error', () => undefined);
  const printer = tailEventLog({ connection: printerRedis, prefix: config.prefix, logger, onEvent: forPerson ? eventLines() : printEvent });
  // What it runs is recorded for the commands run beside it with no flags (doctor, mirror status, relay status…):
  // with its own emulator, what it registered (never credentials of a real server).
  const forget = recordUp({
    ...(emulator === undefined
      ? {}
      : {
          settings: {
            ADMIN_URL: admin.url,
            ADMIN_USERNAME: DEMO_ORG_ADMIN.username,
            ADMIN_PASSWORD: DEMO_ORG_ADMIN.password,
            REGISTER: DEMO_SERVICES.join(','),
            PUBLIC_URL: config.publicUrl,
            CHANGES: admin.changes.services.join(','),
            ...(admin.changes.track.length === 0
              ? {}
              : { CHANGES_TRACK: admin.changes.track === '*' ? '*' : admin.changes.track.join(',') }),
          },
        }),
    ...(options.config === undefined ? {} : { config: resolve(options.config) }), // --config, else GEOHOOK_CONFIG
    prefix: config.prefix,
    ...(mirror.mirror?.databaseUrl === undefined ? {} : { mirror: upMirrorRecord(admin.url, mirror.mirror, mirror.postgres) }),
  });
  closeOnSignal(logger, async () => {
    forget();
    await printer.close();
    printerRedis.disconnect();
    await server.close();
    await emulator?.close();
    await mirror.postgres?.stop();
  });

  const redisShown = describeTarget(server.redisTarget);
  const pending = await waitUntilReady(
    () => (server.redisAnswered() ? server.registration?.notReadyReason() : `Redis at ${redisShown} has not answered yet`),
    15_000,
  );
  printNotice(
    `receiver   ${config.publicUrl}/webhooks/default  (Redis ${server.redis === undefined ? redisShown : `${redisShown}; its URL, password included: ${EMBEDDED_REDIS_DIR}/url`})`,
  );
  if (!isLoopbackHost(config.host)) {
    printNotice(
      `notice     the receiver listens on ${config.host}:${config.port}: other machines can reach it, its dashboard and /metrics (HOST=${LOOPBACK_HOST} keeps it on this one)`,
    );
  }
  if (emulator !== undefined) {
    const emulatorUrl = `http://127.0.0.1:${config.emulatorPort}`;
    printNotice(`emulator   ${emulatorUrl}/arcgis/admin  (users admin/admin.pass, orgadmin/orgadmin.pass)`);
    printNotice(
      `fire a GP job:  curl -s -X POST ${emulatorUrl}/emulator/services/Tools/Buffer.GPServer/jobs -H 'content-type: application/json' -d '{"outcome":"succeeded"}'`,
    );
    const applyEdits = `curl -s -X POST ${emulatorUrl}/emulator/services/Hosted/Parcels.FeatureServer/applyEdits -H 'content-type: application/json' -d`;
    printNotice(`add a parcel:   ${applyEdits} '{"edits":[{"id":0,"adds":[{"attributes":{"parcel_id":"P-1","status":"Open"}}]}]}'`);
    printNotice(`then close it:  ${applyEdits} '{"edits":[{"id":0,"updates":[{"attributes":{"objectid":1,"status":"Closed"}}]}]}'`);
  }
  if (mirror.mirror !== undefined) printMirrorNotice(mirror.mirror, mirror.postgres);
  // The key registration generated (none was configured): what `geohook send` needs to sign as the webhooks do.
  const generatedKey =
    config.hooks.get(REGISTERED_HOOK)?.secrets[0] === undefined ? server.app.hookKeys.get(REGISTERED_HOOK)?.secrets[0] : undefined;
  if (generatedKey !== undefined) {
    printNotice(
      `signing key  ${generatedKey}  (the webhooks sign with it: geohook send --key ${generatedKey} ${config.publicUrl}/webhooks/default FILE)`,
    );
  }
  printNotice(
    `dashboard  ${config.publicUrl}/ui/${dashboardToken === undefined ? '  (the configured credentials)' : `login?token=${dashboardToken}`}`,
  );
  // The printer below takes no event: a worker of the user's own gets every one (docs/subscriptions.md).
  const workerLines = upWorkerLines({
    cwd: process.cwd(),
    embeddedRedis: server.redis !== undefined,
    prefix: config.prefix,
    subscriptionExists:
      server.redisAnswered() && (await subscriptionExists(printerRedis, config.prefix, WORKER_SUBSCRIPTION).catch(() => false)),
  });
  for (const line of workerLines) printNotice(line);
  const printed = forPerson ? 'events are printed below' : 'events are printed below as JSON lines';
  printNotice(pending === undefined ? `ready: ${printed}; Ctrl-C stops everything` : `not ready yet: ${pending}`);
}

/** `geohook up`, what `npm start` runs. */
export function registerUp(command: Command): void {
  addConfigOptions(command, LOOPBACK_HOST)
    .addOption(new Option('--emulator-port <port>', "its emulator's port (default 7080)").env('EMULATOR_PORT'))
    .option(
      '--mirror',
      'mirror MIRROR (else the CHANGES services) into PostGIS: a local PostgreSQL under ./.geohook/pg unless MIRROR_DATABASE_URL',
    )
    .action((options: Record<string, string | undefined>) => runUp(options));
}
