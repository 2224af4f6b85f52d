import { Option, type Command } from 'commander';
import { adminUnavailable } from '../admin/admin-unavailable.js';
import { adminAuthFor } from '../arcgis/online-admin.js';
import { loadConfig, type ConfigOverrides, type GeohookConfig } from '../config/load-config.js';
import { REGISTERED_HOOK } from '../config/self-registration.js';
import type { Check } from '../doctor/check.js';
import { hasProblems, runDoctor, type DoctorReport } from '../doctor/doctor.js';
import { ConfigError } from '../errors.js';
import { PingLog } from '../queue/ping-log.js';
import type { RedisClient } from '../redis/connection.js';
import { readFailingServices } from '../redis/failing-services.js';
import { HookKeys } from '../signature/hook-keys.js';
import { addAdminOptions, clientOf, receiverOverrides, type ReceiverFlags } from './admin/flags.js';
import { configOption } from './config-options.js';
import { printError, printJson, printLine, printNotice } from './print.js';
import { connectQueueRedis } from './queue-redis-target.js';
import { readUpRecord } from './up-record.js';

interface DoctorFlags extends ReceiverFlags {
  service?: string[];
  json?: boolean;
  config?: string;
}

/** Exit code when the admin API cannot be reached or refuses the credentials. */
const ADMIN_UNAVAILABLE = 2;

const MARKS = { ok: '✓', error: '✗', warning: '!' } as const;

function printCheck(check: Check): void {
  printLine(`  ${check.ok ? MARKS.ok : MARKS[check.severity]} ${check.id}: ${check.message}`);
  if (!check.ok && check.fix !== undefined) printLine(`      fix: ${check.fix}`);
}

/** Checks of the server, the hookUrl and the delivery settings: the same for every service, printed once. */
const SHARED = /^(server|hook-url|settings)\./;

function printReport(report: DoctorReport): void {
  for (const { service, checks } of report.services) {
    printLine(service);
    checks.filter((check) => !SHARED.test(check.id)).forEach(printCheck);
  }
  const shared = report.services[0]?.checks.filter((check) => SHARED.test(check.id)) ?? [];
  if (shared.length > 0) {
    printLine('server, receiver and delivery settings');
    shared.forEach(printCheck);
  }
  if (report.total > report.services.length) {
    printLine(
      `${report.services.length} of the ${report.total} services REGISTER names were checked one by one: those not on the server, ` +
        'those the receiver could not register, and one for the round trip (--service checks another)',
    );
  }
  const trip = report.roundTrip;
  printLine(
    trip === null
      ? "round trip: not run (no service has geohook's webhook to send through)"
      : `round trip: ${trip.ok ? MARKS.ok : MARKS.error} ${trip.message} (${trip.hookUrl})`,
  );
}

/**
 * The keys the receivers hold for the default hook, its last test ping and the services they could not register;
 * the keys `undefined` without Redis.
 */
async function receiverState(config: GeohookConfig, redis: RedisClient | undefined) {
  if (redis === undefined) return { keys: undefined, lastPing: async () => undefined, failing: [] };
  const hookKeys = new HookKeys({ hooks: config.hooks, prefix: config.prefix });
  await hookKeys.load(redis);
  const pings = new PingLog(redis, config.prefix);
  const failing = (await readFailingServices(redis, config.prefix, REGISTERED_HOOK)).map((state) => state.service);
  return {
    keys: hookKeys.get(REGISTERED_HOOK)?.secrets ?? [],
    lastPing: async () => (await pings.lastPings())[REGISTERED_HOOK],
    failing,
  };
}

/** The overrides a flag sets (an unset flag leaves the value below it). */
const definedOf = (overrides: ConfigOverrides): ConfigOverrides =>
  Object.fromEntries(Object.entries(overrides).filter(([, value]) => value !== undefined));

async function runDoctorCommand(flags: DoctorFlags): Promise<void> {
  const overrides = { ...receiverOverrides(flags), GEOHOOK_CONFIG: flags.config };
  // With no admin root given, the `geohook up` running here is checked: what it registered, on its emulator.
  const up = (overrides.ADMIN_URL ?? process.env.ADMIN_URL)?.trim() ? undefined : readUpRecord();
  if (up !== undefined)
    printNotice(`geohook: checking the geohook up running in this directory (pid ${up.pid}): its emulator at ${up.settings.ADMIN_URL}`);
  const config = loadConfig(process.env, up === undefined ? overrides : { ...up.settings, ...definedOf(overrides) });
  if (config.admin === undefined) {
    throw new ConfigError(
      'ADMIN_URL: required (the admin root of the GIS server), or pass --admin-url; with no flags, doctor checks a geohook up running in this directory',
    );
  }
  const services = flags.service ?? config.admin.register;
  if (services.length === 0) throw new ConfigError('no service to check: pass --service, or set REGISTER');
  let redis: RedisClient | undefined;
  try {
    redis = (await connectQueueRedis(config)).connection;
  } catch (err) {
    printNotice(`geohook: ${(err as Error).message}: the receiver's keys and records are not checked`);
  }
  const auth = adminAuthFor(config.admin.url, config.admin.auth);
  try {
    const report = await runDoctor({
      client: clientOf(config.admin),
      adminUrl: config.admin.url,
      auth,
      services,
      hookUrl: `${config.publicUrl}/webhooks/${REGISTERED_HOOK}`,
      changeTypes: config.admin.changeTypes,
      signatureHeader: config.signatureHeaders[0]!,
      receiver: up === undefined ? 'serve' : 'up',
      ...(await receiverState(config, redis)),
    });
    if (flags.json === true) printJson(report);
    else printReport(report);
    process.exitCode = hasProblems(report) ? 1 : 0;
  } catch (err) {
    const reason = adminUnavailable(err, config.admin.url);
    if (reason === undefined) throw err;
    printError(reason);
    process.exitCode = ADMIN_UNAVAILABLE;
  } finally {
    redis?.disconnect();
  }
}

/** `geohook doctor`: why a service's webhooks would not fire, the exact fix, and a live round trip. */
export function registerDoctor(command: Command): void {
  addAdminOptions(command)
    .option('--service <service...>', 'a service to check, folder/name.Type (default: REGISTER)')
    .addOption(new Option('--redis-url <url>', "the receivers' Redis (default: that of a `geohook up` in this directory)").env('REDIS_URL'))
    .addOption(configOption('GEOHOOK_PREFIX'))
    .addOption(configOption('PUBLIC_URL'))
    .addOption(configOption('GEOHOOK_CONFIG'))
    .option('--json', 'print the report as one JSON document')
    .action((_options: unknown, cmd: Command) => runDoctorCommand(cmd.opts<DoctorFlags>()));
}
