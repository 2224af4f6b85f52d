import type { AdminClient, ServiceRecord } from '../admin/types.js';
import { serviceRestUrl } from '../arcgis/rest-urls.js';
import { parseServiceName, updateDefinitionPath, type ServiceName } from '../arcgis/service-name.js';
import { failed, passed, type Check } from './check.js';

/** What the service checks read the server with. */
export interface ServiceCheckContext {
  client: AdminClient;
  /** ADMIN_URL. */
  adminUrl: string;
  /** Reads a REST resource of the server with the admin credentials. */
  readRest(url: URL): Promise<Record<string, unknown>>;
}

/** The checks of a service itself, and whether it takes webhooks at all (the webhook checks follow only then). */
export interface ServiceChecks {
  checks: Check[];
  takesWebhooks: boolean;
}

const capabilityList = (value: unknown): string[] =>
  typeof value === 'string'
    ? value
        .split(',')
        .map((capability) => capability.trim())
        .filter(Boolean)
    : [];

const has = (capabilities: readonly string[], name: string): boolean =>
  capabilities.some((capability) => capability.toLowerCase() === name.toLowerCase());

/** The capabilities a feature service needs for webhooks: its own, with Editing and ChangeTracking, without Sync. */
function webhookCapabilities(capabilities: readonly string[]): string {
  const kept = capabilities.filter((capability) => capability.toLowerCase() !== 'sync');
  for (const needed of ['Editing', 'ChangeTracking']) if (!has(kept, needed)) kept.push(needed);
  return kept.join(',');
}

/** The fix of a feature service's definition: the command, and the admin call it makes. */
function definitionFix(service: ServiceName, adminUrl: string, capabilities: readonly string[]): string {
  const wanted = webhookCapabilities(capabilities);
  const definition = JSON.stringify({ capabilities: wanted, syncEnabled: false });
  return (
    `geohook admin update-definition ${service} --capabilities ${wanted} --sync-enabled false ` +
    `(POST ${adminUrl.replace(/\/+$/, '')}/${updateDefinitionPath(service)} updateDefinition=${definition})`
  );
}

/** `Hosted/Parcels.FeatureServer` → the service record findServices lists for it (ArcGIS Enterprise). */
async function findRecord(client: AdminClient, service: ServiceName): Promise<ServiceRecord | undefined> {
  const { folder = '', name, type } = parseServiceName(service);
  const records = await client.findServices({ ...(folder === '' ? {} : { folderName: folder }), serviceName: name });
  const named = records.filter((record) => record.serviceName === name && (record.folderName ?? '') === folder);
  return named.find((record) => record.type === type) ?? named[0];
}

/** The fix of a service the GIS server does not have. */
export const missingFix = (service: ServiceName): string =>
  `check the name (folder/name.Type): geohook admin find --name ${parseServiceName(service).name}`;

/** GPServer: only asynchronous geoprocessing services take webhooks. */
function gpChecks(service: ServiceName, record: ServiceRecord): Check[] {
  const executionType = (record.properties as { executionType?: unknown } | undefined)?.executionType;
  if (String(executionType).toLowerCase() !== 'synchronous') return [passed('gp.asynchronous', `${service} runs its jobs asynchronously`)];
  return [
    failed(
      'gp.asynchronous',
      `${service} is a synchronous geoprocessing service: only asynchronous ones take webhooks`,
      'republish it with the execution mode Asynchronous (ArcGIS Pro: Share as Web Tool > Configuration > Execution mode; ' +
        'or edit the service in ArcGIS Server Manager: Parameters > Execution Mode: Asynchronous)',
    ),
  ];
}

/** FeatureServer: editing, change tracking without sync; not branch versioned; non-hosted data nonversioned and archived. */
async function featureChecks(service: ServiceName, context: ServiceCheckContext, hosted: boolean): Promise<Check[]> {
  const url = serviceRestUrl(context.adminUrl, service);
  const resource = await context.readRest(url);
  const capabilities = capabilityList(resource.capabilities);
  const fix = definitionFix(service, context.adminUrl, capabilities);
  const listed = capabilities.join(',') || 'none';
  const sync = resource.syncEnabled === true || has(capabilities, 'Sync');
  const checks = [
    has(capabilities, 'Editing')
      ? passed('feature.editing', `${service} has the Editing capability`)
      : failed('feature.editing', `${service} lacks the Editing capability (capabilities: ${listed})`, fix),
    has(capabilities, 'ChangeTracking')
      ? passed('feature.change-tracking', `${service} tracks changes`)
      : failed('feature.change-tracking', `${service} has change tracking off (capabilities: ${listed})`, fix),
    sync
      ? failed('feature.sync', `${service} has sync enabled: webhooks need change tracking without sync`, fix)
      : passed('feature.sync', `${service} has sync off`),
  ];
  const layers = Array.isArray(resource.layers) ? (resource.layers as { id?: unknown }[]) : [];
  const first = layers.find((layer) => Number.isSafeInteger(layer.id));
  if (first === undefined) return checks;
  const layer = await context.readRest(new URL(`${url.href}/${String(first.id)}`));
  const republish = 'republish the service from data that is nonversioned (or traditionally versioned) with archiving enabled';
  checks.push(
    layer.isDataBranchVersioned === true
      ? failed('feature.branch-versioned', `${service} references branch versioned data, which takes no webhooks`, republish)
      : passed('feature.branch-versioned', `${service} is not branch versioned`),
  );
  if (hosted) return checks;
  checks.push(
    layer.isDataVersioned === true && layer.isDataBranchVersioned !== true
      ? failed('feature.nonversioned', `${service} is not hosted and its data is versioned`, republish)
      : passed('feature.nonversioned', `${service}'s data is nonversioned`),
    layer.isDataArchived === true
      ? passed('feature.archiving', `${service}'s data has archiving enabled`)
      : failed(
          'feature.archiving',
          `${service} is not hosted and its data has archiving off`,
          'enable archiving on its feature classes (ArcGIS Pro: Manage > Enable Archiving), then restart the service',
        ),
  );
  return checks;
}

/**
 * Whether `service` exists and its type and settings let it take webhooks (docs/troubleshooting.md): GP services
 * asynchronous; feature services with editing, change tracking on, sync off, not branch versioned, and for
 * non-hosted ones nonversioned data with archiving.
 */
export async function checkService(service: ServiceName, context: ServiceCheckContext): Promise<ServiceChecks> {
  const { type } = parseServiceName(service);
  const online = context.client.product === 'online';
  if (!online) {
    const record = await findRecord(context.client, service);
    if (record === undefined)
      return { checks: [failed('service.exists', `${service} is not on the GIS server`, missingFix(service))], takesWebhooks: false };
    const found = `${record.folderName === '' ? '' : `${record.folderName}/`}${record.serviceName}.${record.type}`;
    const exists = passed('service.exists', `${found} is on the GIS server`);
    if (record.type !== type || (type !== 'GPServer' && type !== 'FeatureServer')) {
      const message = `${found} is a ${record.type}: only GPServer and FeatureServer services take webhooks`;
      const fix = 'enable Feature Access on the service (it then has a FeatureServer) and check that, or use a GP or feature service';
      return { checks: [exists, failed('service.type', message, fix)], takesWebhooks: false };
    }
    const typeOk = passed('service.type', `${found} is a ${type}`);
    const hosted = (record.portalProperties as { isHosted?: unknown } | undefined)?.isHosted !== false;
    const more = type === 'GPServer' ? gpChecks(service, record) : await featureChecks(service, context, hosted);
    return { checks: [exists, typeOk, ...more], takesWebhooks: more.every((check) => check.ok) };
  }
  if (type !== 'FeatureServer') {
    const fix = 'ArcGIS Online takes webhooks on hosted feature layers only: name one as name.FeatureServer';
    return { checks: [failed('service.type', `${service}: not a hosted feature layer`, fix)], takesWebhooks: false };
  }
  const more = await featureChecks(service, context, true);
  const exists = passed('service.exists', `${service} is a hosted feature layer of the organization`);
  return { checks: [exists, ...more], takesWebhooks: more.every((check) => check.ok) };
}
