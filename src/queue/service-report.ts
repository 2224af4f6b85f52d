import type { ServiceName } from '../arcgis/service-name.js';
import { parseActivityField, type ActivityKind } from '../events/service-activity.js';
import { parseScope } from '../events/tracked-ranges.js';
import type { RedisClient } from '../redis/connection.js';
import { activityKey, upstreamFailuresKey, upstreamKey, watermarksKey } from '../redis/keys.js';

/** What geohook knows of a registered webhook (the Redis hash `<prefix>:upstream`, by service, as JSON). */
export interface UpstreamState {
  webhookId: string;
  /** Whether it is active after the last check (geohook reactivates a deactivated one in the same pass). */
  active: boolean;
  /** How many times geohook found it deactivated by the server. */
  deactivations: number;
  /** Last check, epoch ms. */
  checkedAt: number;
  /** When geohook last found it deactivated, epoch ms. */
  deactivatedAt?: number;
  /** When the edits it missed were last backfilled after a deactivation, epoch ms. */
  recoveredAt?: number;
  /** The product whose admin API registered it: ArcGIS Enterprise or an ArcGIS Online organization. */
  product?: 'enterprise' | 'online';
  /** Why a registration pass last changed the webhook (a key its deliveries were refused with, a deactivation), and when (epoch ms). */
  cause?: { at: number; text: string };
  /** Why the last upstream check failed (its error's code and message), and when (epoch ms); cleared by one that passes. */
  checkError?: { at: number; text: string };
}

/** How a service's edits reach geohook. */
export type ServiceMode = 'webhook' | 'poll' | 'webhook+poll';

/** One service as the services view shows it (docs/backfill.md#the-services-view); times are ISO 8601. */
export interface ServiceReport {
  /** `folder/name.Type`. */
  service: ServiceName;
  /** Webhook deliveries, polling (POLL), or both. */
  mode: ServiceMode;
  /** The webhook geohook registered, as the last registration pass found it; absent when geohook registers none. */
  webhook?: {
    id: string;
    active: boolean;
    /** Times the server deactivated it (and geohook reactivated it). */
    deactivations: number;
    checkedAt: string;
    deactivatedAt?: string;
    recoveredAt?: string;
    product?: 'enterprise' | 'online';
    /** Why a registration pass last changed it: what its failures came from, when geohook knows. */
    cause?: { at: string; text: string };
    /** Why its last upstream check failed: the error's code and message. */
    checkError?: { at: string; text: string };
  };
  /** The last signed delivery received for the service (new or a repeat). */
  lastDeliveryAt?: string;
  /** Failed deliveries the server reported in the last 24 hours (ArcGIS Enterprise's `notificationStatus`). */
  recentFailures: number;
  lastFailureAt?: string;
  /** The highest server generation handed to consumers (of any layer); absent without change tracking. */
  watermark?: number;
  /** ArcGIS Online, whose layers count their generations apart: each layer's watermark, by layer id. */
  layerWatermarks?: Record<string, number>;
  /** The last gap whose edits geohook fetched itself and enqueued (`source: "backfill"`). */
  lastBackfillAt?: string;
  /** The last poll of the service's generations (POLL). */
  lastPollAt?: string;
}

const DAY_MS = 86_400_000;

const isoTime = (ms: number | undefined): string | undefined =>
  ms === undefined || !Number.isFinite(ms) ? undefined : new Date(ms).toISOString();

/** `value` without its undefined fields: the optional fields of `T` are absent rather than undefined. */
function definedOnly<T extends object>(value: { [K in keyof T]-?: T[K] | undefined }): T {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as T;
}

/** `map[key]` raised to `value`, if lower or absent. */
function keepHighest<K>(map: Map<K, number>, key: K, value: number): void {
  map.set(key, Math.max(map.get(key) ?? -Infinity, value));
}

/**
 * Every service geohook has heard of, with what it knows of each: the registered webhook's state and the
 * failures the server reported (upstream health), the last delivery, backfill and poll (the activity hash),
 * and the watermark. A handful of Redis reads, plus two per registered service. Sorted by service name.
 */
export async function readServiceReports(redis: RedisClient, prefix: string, now = Date.now()): Promise<ServiceReport[]> {
  const [upstream, activity, watermarks] = await Promise.all([
    redis.hgetall(upstreamKey(prefix)),
    redis.hgetall(activityKey(prefix)),
    redis.hgetall(watermarksKey(prefix)),
  ]);
  const times = new Map<ServiceName, Partial<Record<ActivityKind, number>>>();
  for (const [field, at] of Object.entries(activity)) {
    const parsed = parseActivityField(field);
    if (parsed !== undefined) times.set(parsed.service, { ...times.get(parsed.service), [parsed.kind]: Number(at) });
  }
  const highest = new Map<ServiceName, number>();
  const perLayer = new Map<ServiceName, Map<number, number>>();
  for (const [scope, generation] of Object.entries(watermarks)) {
    const { service, layerId } = parseScope(scope);
    keepHighest(highest, service, Number(generation));
    if (layerId === undefined) continue;
    const layers = perLayer.get(service) ?? new Map<number, number>();
    keepHighest(layers, layerId, Number(generation));
    perLayer.set(service, layers);
  }
  const services = [...new Set([...Object.keys(upstream), ...times.keys(), ...highest.keys()])].sort();
  return Promise.all(
    services.map(async (service): Promise<ServiceReport> => {
      const state = upstream[service] === undefined ? undefined : (JSON.parse(upstream[service]) as UpstreamState);
      const failures = upstreamFailuresKey(prefix, service);
      const [recentFailures, last] =
        state === undefined
          ? [0, []]
          : await Promise.all([redis.zcount(failures, now - DAY_MS, '+inf'), redis.zrange(failures, '-1', '-1', 'WITHSCORES')]);
      const seen = times.get(service) ?? {};
      const layers = perLayer.get(service);
      const webhook = state !== undefined || seen.delivery !== undefined;
      const mode: ServiceMode = seen.poll === undefined ? 'webhook' : webhook ? 'webhook+poll' : 'poll';
      return definedOnly<ServiceReport>({
        service,
        mode,
        webhook:
          state &&
          definedOnly<NonNullable<ServiceReport['webhook']>>({
            id: state.webhookId,
            active: state.active,
            deactivations: state.deactivations,
            checkedAt: isoTime(state.checkedAt)!,
            deactivatedAt: isoTime(state.deactivatedAt),
            recoveredAt: isoTime(state.recoveredAt),
            product: state.product,
            cause: state.cause && { at: isoTime(state.cause.at)!, text: state.cause.text },
            checkError: state.checkError && { at: isoTime(state.checkError.at)!, text: state.checkError.text },
          }),
        lastDeliveryAt: isoTime(seen.delivery),
        recentFailures,
        lastFailureAt: isoTime(last[1] === undefined ? undefined : Number(last[1])),
        watermark: highest.get(service),
        layerWatermarks: layers && Object.fromEntries(layers), // integer keys: in layer order
        lastBackfillAt: isoTime(seen.backfill),
        lastPollAt: isoTime(seen.poll),
      });
    }),
  );
}

/** The columns of a service's row, in their order. */
export const serviceColumns = [
  'service',
  'mode',
  'webhook',
  'lastDelivery',
  'failures24h',
  'lastFailure',
  'watermark',
  'lastBackfill',
  'lastPoll',
] as const;

/** A service's report as text, one field per column (empty when unknown). */
export type ServiceRow = Record<(typeof serviceColumns)[number], string>;

/** A service's report as one row of text for a table (the dashboard's services view, `geohook events stats --table`). */
export function serviceReportRow(report: ServiceReport): ServiceRow {
  const { webhook } = report;
  const state =
    webhook === undefined
      ? ''
      : `${webhook.active ? 'active' : 'inactive'}${webhook.deactivations === 0 ? '' : `, deactivated ${webhook.deactivations}×`}`;
  return {
    service: report.service,
    mode: report.mode,
    webhook: state,
    lastDelivery: report.lastDeliveryAt ?? '',
    failures24h: webhook === undefined ? '' : String(report.recentFailures),
    lastFailure: report.lastFailureAt ?? '',
    watermark:
      report.layerWatermarks === undefined
        ? (report.watermark?.toString() ?? '')
        : Object.entries(report.layerWatermarks)
            .map(([layer, generation]) => `${layer}: ${generation}`)
            .join(', '),
    lastBackfill: report.lastBackfillAt ?? '',
    lastPoll: report.lastPollAt ?? '',
  };
}
