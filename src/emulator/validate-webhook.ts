import { changeTypeValues } from '../arcgis/change-types.js';
import { scheduleFrequencies, scheduleStates, type ScheduleInfo, type Webhook } from '../arcgis/webhook.js';
import { AdminError, invalidParameter } from './admin-error.js';
import type { Params } from './params.js';
import type { CatalogService } from './types.js';

const contentTypes = ['application/json', 'application/x-www-form-urlencoded'] as const;
const payloadFormats = ['json', 'pjson'] as const;

/** A service's capabilities, lower-cased (the product reads them in any case). */
export const capabilitySet = (service: CatalogService): Set<string> =>
  new Set(
    (service.capabilities ?? '')
      .split(',')
      .map((capability) => capability.trim().toLowerCase())
      .filter(Boolean),
  );

/** Throws the reason a service cannot take webhooks (docs/emulator.md), or returns. */
export function checkPrerequisites(service: CatalogService): void {
  const label = `${service.folderName}/${service.serviceName}.${service.type}`;
  if (service.type === 'GPServer') {
    if (service.asynchronous !== true) {
      throw new AdminError(
        400,
        `Service '${label}' is a synchronous geoprocessing service: only asynchronous geoprocessing services take webhooks.`,
      );
    }
    return;
  }
  if (service.type !== 'FeatureServer') {
    throw new AdminError(
      400,
      `Service '${label}' is a ${service.type}: webhooks are supported on GPServer and FeatureServer services only.`,
    );
  }
  if (service.branchVersioned === true)
    throw new AdminError(400, `Service '${label}' references branch versioned data, which does not support webhooks.`);
  const capabilities = capabilitySet(service);
  if (!capabilities.has('editing'))
    throw new AdminError(400, `Service '${label}' needs the editing capability ('Editing') to take webhooks.`);
  if (!capabilities.has('changetracking')) {
    throw new AdminError(
      400,
      `Service '${label}' needs change tracking ('ChangeTracking' in capabilities) to take webhooks; enable it with updateDefinition.`,
    );
  }
  if (service.syncEnabled === true || capabilities.has('sync')) {
    throw new AdminError(400, `Service '${label}' has sync enabled: change tracking without sync is required to take webhooks.`);
  }
  if (service.hosted === false && (service.versioned === true || service.archiving !== true)) {
    throw new AdminError(400, `Service '${label}' is not hosted: its data must be nonversioned with archiving enabled to take webhooks.`);
  }
}

/** `changeTypes` as a string, a comma list or a JSON array, each one of the 11 values (any case). */
export function parseChangeTypes(raw: string): string[] {
  const text = raw.trim();
  let items: unknown[];
  if (text.startsWith('[')) {
    try {
      items = JSON.parse(text) as unknown[];
    } catch {
      throw invalidParameter('changeTypes', 'must be a string, a comma-separated list or a JSON array');
    }
    if (!Array.isArray(items)) throw invalidParameter('changeTypes', 'must be a string, a comma-separated list or a JSON array');
  } else {
    items = text.split(',');
  }
  const values = items.map((item) => {
    // Not String(item): a JSON array nested some thousand levels deep overflows the stack there.
    if (typeof item !== 'string')
      throw invalidParameter('changeTypes', `each item must be a string, one of ${changeTypeValues.join(', ')}`);
    const canonical = changeTypeValues.find((value) => value.toLowerCase() === item.trim().toLowerCase());
    if (canonical === undefined) throw invalidParameter('changeTypes', `'${item}' is not one of ${changeTypeValues.join(', ')}`);
    return canonical;
  });
  if (values.length === 0) throw invalidParameter('changeTypes', `must name at least one of ${changeTypeValues.join(', ')}`);
  return [...new Set(values)];
}

function parseHookUrl(raw: string): string {
  try {
    const url = new URL(raw);
    if (url.protocol === 'http:' || url.protocol === 'https:') return raw;
  } catch {
    // Reported below.
  }
  throw invalidParameter('hookUrl', `must be an http or https URL, got '${raw}'`);
}

/** `value` when it is one of `allowed` (any case), `fallback` when absent, else undefined. */
function oneOf<T extends string>(value: unknown, allowed: readonly T[], fallback: T): T | undefined {
  if (value === undefined) return fallback;
  return typeof value === 'string' ? allowed.find((candidate) => candidate === value.trim().toLowerCase()) : undefined;
}

function parseScheduleInfo(params: Params, now: number): ScheduleInfo | undefined {
  const raw = params.json('scheduleInfo');
  if (raw === undefined) return undefined;
  const invalid = (): AdminError =>
    invalidParameter(
      'scheduleInfo',
      `must be an object {name, state (${scheduleStates.join(' or ')}, optional), startAt, recurrenceInfo: {interval (integer ≥ 1), frequency (${scheduleFrequencies.join(', ')})}}`,
    );
  // Checked before a field is read: `scheduleInfo` may be null, an array or a scalar.
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw invalid();
  const input = raw as { name?: unknown; state?: unknown; startAt?: unknown; recurrenceInfo?: { interval?: unknown; frequency?: unknown } };
  const interval = input.recurrenceInfo?.interval ?? 20;
  const frequency = oneOf(input.recurrenceInfo?.frequency, scheduleFrequencies, 'second');
  const state = oneOf(input.state, scheduleStates, 'enabled');
  if (typeof interval !== 'number' || !Number.isInteger(interval) || interval < 1 || frequency === undefined || state === undefined)
    throw invalid();
  return {
    name: typeof input.name === 'string' ? input.name : '',
    state,
    startAt: typeof input.startAt === 'number' ? input.startAt : now,
    recurrenceInfo: { interval, frequency },
  };
}

/** The fields of a webhook taken from create/edit parameters; `current` supplies what edit leaves out. */
export function webhookFields(
  params: Params,
  service: CatalogService,
  now: number,
  current?: Pick<
    Webhook,
    'name' | 'changeTypes' | 'signatureKey' | 'hookUrl' | 'active' | 'contentType' | 'scheduleInfo' | 'payloadFormat'
  >,
): Pick<Webhook, 'name' | 'changeTypes' | 'signatureKey' | 'hookUrl' | 'active' | 'contentType' | 'scheduleInfo' | 'payloadFormat'> {
  const isFeature = service.type === 'FeatureServer';
  const changeTypes = isFeature && params.has('changeTypes') ? parseChangeTypes(params.string('changeTypes')!) : undefined;
  return {
    name: current !== undefined && !params.has('name') ? current.name : params.requiredString('name'),
    hookUrl: current !== undefined && !params.has('hookUrl') ? current.hookUrl : parseHookUrl(params.requiredString('hookUrl')),
    changeTypes: changeTypes ?? current?.changeTypes ?? ['*'],
    signatureKey: params.string('signatureKey') ?? current?.signatureKey ?? '',
    active: params.boolean('active') ?? current?.active ?? false,
    contentType: params.oneOf('contentType', contentTypes) ?? current?.contentType ?? 'application/json',
    payloadFormat: params.oneOf('payloadFormat', payloadFormats) ?? current?.payloadFormat ?? 'json',
    scheduleInfo: isFeature
      ? (parseScheduleInfo(params, now) ??
        current?.scheduleInfo ?? { name: '', state: 'enabled', startAt: now, recurrenceInfo: { interval: 20, frequency: 'second' } })
      : {},
  };
}
