import { adminUnavailable } from '../admin/admin-unavailable.js';
import type { AdminClient } from '../admin/types.js';
import type { ResolvedAdminAuth } from '../arcgis/admin-auth.js';
import { adminSiteUrl } from '../arcgis/rest-urls.js';
import type { ServiceName } from '../arcgis/service-name.js';
import { trustedUrls } from '../arcgis/trusted-urls.js';
import type { WebhookSettings } from '../arcgis/webhook-settings.js';
import { createServiceSession } from '../arcgis-request/service-session.js';
import { AdminApiError } from '../errors.js';
import { failed, isRed, passed, type Check } from './check.js';
import { answersCheck, httpsCheck, settingsChecks } from './delivery-checks.js';
import { roundTrip, type RoundTrip } from './round-trip.js';
import { selectServices } from './select-services.js';
import { checkService, missingFix } from './service-checks.js';
import { checkWebhook } from './webhook-checks.js';

/** Options of {@link runDoctor}. */
export interface DoctorOptions {
  client: AdminClient;
  /** ADMIN_URL. */
  adminUrl: string;
  /** ADMIN_URL's credentials, for the services' REST resources (as `adminAuthFor` gives them). */
  auth: ResolvedAdminAuth | undefined;
  /** REGISTER's entries (names and patterns), or the services `--service` names. */
  services: readonly ServiceName[];
  /** The services the receiver recorded as failing to register (`<prefix>:registration:<hook>:failing`). @defaultValue [] */
  failing?: readonly ServiceName[];
  /** `$PUBLIC_URL/webhooks/default`. */
  hookUrl: string;
  /** CHANGE_TYPES. */
  changeTypes: readonly string[];
  /** The header the round trip signs in (the first of SIGNATURE_HEADERS). */
  signatureHeader: string;
  /** The keys the receivers verify the default hook with; `undefined` when Redis could not be read. */
  keys: readonly string[] | undefined;
  /** The default hook's last recorded test ping, epoch ms (`<prefix>:pings`). */
  lastPing: () => Promise<number | undefined>;
  /**
   * How the receiver checked was started, for the fixes: `up` for the `geohook up` running beside doctor (its
   * registration set by itself), `serve` otherwise (REGISTER and PUBLIC_URL). @defaultValue 'serve'
   */
  receiver?: 'up' | 'serve';
}

/** What `geohook doctor --json` prints. */
export interface DoctorReport {
  services: { service: ServiceName; checks: Check[] }[];
  /** Services REGISTER names (patterns resolved), of which `services` lists those checked (see `selectServices`). */
  total: number;
  /** `null` when no service has geohook's webhook to send through. */
  roundTrip: RoundTrip | null;
}

/** True when the report holds a red line or a failed round trip: `geohook doctor` exits 1. */
export const hasProblems = (report: DoctorReport): boolean =>
  report.services.some(({ checks }) => checks.some(isRed)) || report.roundTrip?.ok === false;

const SIGNING_VERSION = 11.2;

function versionCheck(currentVersion: unknown): Check {
  const version = Number(currentVersion);
  if (!Number.isFinite(version)) return failed('server.version', 'the server does not say its version', 'check ADMIN_URL', 'warning');
  return version >= SIGNING_VERSION
    ? passed('server.version', `ArcGIS Enterprise ${version} signs webhook deliveries`)
    : failed(
        'server.version',
        `ArcGIS Enterprise ${version} does not sign webhook deliveries (signing came in ${SIGNING_VERSION})`,
        `upgrade to ArcGIS Enterprise ${SIGNING_VERSION} or later`,
      );
}

/** A service the server could not be asked about: a failed line, unless the admin API is down altogether. */
function unreadable(service: ServiceName, err: unknown, adminUrl: string): Check {
  if (adminUnavailable(err, adminUrl) !== undefined || !(err instanceof AdminApiError)) throw err;
  if (err.serverCode === 404) return failed('service.exists', `${service} is not on the GIS server`, 'check the name (folder/name.Type)');
  return failed('service.read', `${service} could not be read: ${err.message}`, 'check the service and the admin user');
}

/**
 * `geohook doctor` (docs/troubleshooting.md): for each service, whether its webhooks can fire and reach this
 * receiver, one check per cause with its fix; then a live round trip through the first webhook found. Throws
 * what {@link adminUnavailable} recognises when the admin API cannot be used at all.
 */
export async function runDoctor(options: DoctorOptions): Promise<DoctorReport> {
  const { client } = options;
  const enterprise = client.product === 'enterprise';
  // The first call: an unreachable server or refused credentials stop doctor here (exit 2).
  const version = enterprise
    ? versionCheck((await client.info()).currentVersion)
    : passed('server.version', 'ArcGIS Online signs deliveries');
  const session = createServiceSession({
    trusted: trustedUrls([adminSiteUrl(options.adminUrl)]),
    ...(options.auth === undefined ? {} : { auth: options.auth }),
  });
  const context = { client, adminUrl: options.adminUrl, readRest: (url: URL) => session.read(url) };
  let settings: WebhookSettings | undefined;
  let settingsError: string | undefined;
  if (enterprise) {
    try {
      settings = await client.settings.get();
    } catch (err) {
      if (adminUnavailable(err, options.adminUrl) !== undefined) throw err;
      settingsError = (err as Error).message; // an administrator who is not an organization administrator
    }
  }
  const urlChecks = [httpsCheck(options.hookUrl), await answersCheck(options.hookUrl, options.receiver ?? 'serve')];
  const expectation = { ...options, settings, now: Date.now() };

  const selection = await selectServices(client, options.services, options.failing ?? []);
  const services: DoctorReport['services'] = selection.missing.map((service) => ({
    service,
    checks: [version, failed('service.exists', `${service} is not on the GIS server`, missingFix(service)), ...urlChecks],
  }));
  let trip: RoundTrip | null = null;
  for (const service of selection.services) {
    const checks = [version];
    try {
      const found = await checkService(service, context);
      checks.push(...found.checks);
      if (found.takesWebhooks) {
        const { checks: webhookChecks, webhook } = await checkWebhook(service, expectation);
        checks.push(...webhookChecks);
        if (trip === null && webhook !== undefined) trip = await roundTrip({ ...options, service, webhook });
      }
    } catch (err) {
      checks.push(unreadable(service, err, options.adminUrl));
    }
    services.push({ service, checks: [...checks, ...urlChecks] });
  }
  // The timeout is judged against the acknowledgement the round trip measured.
  if (enterprise) {
    const delivery = settingsChecks(settings, trip?.ackMs, settingsError);
    for (const { checks } of services) checks.push(...delivery);
  }
  return { services, total: selection.total, roundTrip: trip };
}
