import type { FastifyInstance } from 'fastify';
import { QueueUnavailableError } from '../errors.js';
import { serviceColumns, serviceReportRow, type ServiceReport, type ServiceRow } from '../queue/service-report.js';
import { sendError } from '../receiver/error-reply.js';
import type { FailingService } from '../redis/failing-services.js';
import { mirrorSectionHtml, type MirrorView } from './mirror-section.js';
import { asTime, escapeHtml, sendPage, shortTime, statusPageHtml } from './page-html.js';
import type { RecentEvent, RecentEventsQuery } from './recent-events.js';

/** Options of {@link servicesPage}. */
export interface ServicesPageOptions {
  /** Reads every service's report from Redis. */
  services: () => Promise<ServiceReport[]>;
  /** Reads the services self-registration could not register. */
  failing: () => Promise<FailingService[]>;
  /** Reads the newest events across the queues. */
  recent: (query: RecentEventsQuery) => Promise<RecentEvent[]>;
  /** A webhook state older than this (ms) is stale: no registration pass checked it lately (an earlier run's). */
  staleAfterMs: number;
  /** The dashboard's prefix, for the link back to the queues. */
  boardPath: string;
  /** Reads the PostGIS mirror's layers (`readMirrorStatus`); none when no service is mirrored. */
  mirror?: () => Promise<MirrorView>;
}

/** The headings of the columns of a {@link ServiceRow}. */
const HEADINGS: ServiceRow = {
  service: 'Service',
  mode: 'Mode',
  webhook: 'Webhook',
  lastDelivery: 'Last delivery',
  failures24h: 'Upstream failures (24 h)',
  lastFailure: 'Last failure',
  watermark: 'Watermark',
  lastBackfill: 'Last backfill',
  lastPoll: 'Last poll',
};

/** Seconds between two reloads of the page. */
export const SERVICES_REFRESH_SECONDS = 15;

const PRODUCTS = { enterprise: 'ArcGIS Enterprise', online: 'ArcGIS Online' } as const;

/** The link that lists a service's events. */
const serviceLink = (service: string, boardPath: string): string =>
  `<a href="${escapeHtml(boardPath)}/services?service=${encodeURIComponent(service)}">${escapeHtml(service)}</a>`;

/** Why the last upstream check of the service's webhook failed, when it did: the error's code and message. */
function checkErrorText(report: ServiceReport): string | undefined {
  const failed = report.webhook?.checkError;
  return failed === undefined ? undefined : `upstream check failed at ${shortTime(failed.at)}: ${failed.text}`;
}

/**
 * What the failed deliveries came from: the cause the last registration pass found and fixed (a wrong key, a
 * deactivation), or, the server giving none, where to look.
 */
function failureCauseText(report: ServiceReport): string | undefined {
  if (report.lastFailureAt === undefined) return undefined;
  const cause = report.webhook?.cause;
  return cause === undefined
    ? `the GIS server gives no cause: geohook doctor --service ${report.service} checks the webhook`
    : `${cause.text} (${shortTime(cause.at)})`;
}

function rowHtml(report: ServiceReport, page: PageContext): string {
  const row = serviceReportRow(report);
  const checkedAt = report.webhook === undefined ? undefined : Date.parse(report.webhook.checkedAt);
  const stale = checkedAt !== undefined && page.now - checkedAt > page.staleAfterMs;
  const state = report.webhook === undefined ? '' : stale ? 'stale' : report.webhook.active ? 'ok' : 'bad';
  const cells = serviceColumns.map((key) => {
    if (key === 'service') {
      // ArcGIS Online's layers keep their own generations: a service with layer watermarks is an Online one too.
      const product = report.webhook?.product ?? (report.layerWatermarks === undefined ? undefined : 'online');
      const tag = product === undefined ? '' : ` <span class="product">${PRODUCTS[product]}</span>`;
      return `<td data-column="service">${serviceLink(row.service, page.boardPath)}${tag}</td>`;
    }
    const text =
      key === 'webhook' && stale
        ? `stale: not checked since ${shortTime(report.webhook!.checkedAt)}`
        : key === 'watermark'
          ? row.watermark.replace(/\d{13,}/g, asTime)
          : key.startsWith('last') && row[key] !== ''
            ? shortTime(row[key])
            : row[key];
    const why = key === 'webhook' ? checkErrorText(report) : key === 'lastFailure' ? failureCauseText(report) : undefined;
    const mark =
      key === 'webhook' && why !== undefined
        ? ' class="bad wrap"'
        : key === 'webhook' && state !== ''
          ? ` class="${state}"`
          : key === 'failures24h' && report.recentFailures > 0
            ? ' class="bad"'
            : why === undefined
              ? ''
              : ' class="wrap"';
    const because = why === undefined ? '' : `<span class="why">${escapeHtml(why)}</span>`;
    return `<td data-column="${key}"${mark}>${escapeHtml(text)}${because}</td>`;
  });
  return `<tr data-service="${escapeHtml(report.service)}"${stale ? ' class="stale"' : ''}>${cells.join('')}</tr>`;
}

/** One line of the recent events: when, what, from which service, and where its job is. */
function eventHtml(event: RecentEvent, boardPath: string): string {
  // Any producer on the prefix may have written a job: every field of its data is escaped.
  const id = escapeHtml(event.id);
  const job = escapeHtml(`${boardPath}/queue/${event.queue}/${encodeURIComponent(event.id)}`);
  return (
    `<tr data-event="${id}"><td>${escapeHtml(shortTime(event.receivedAt))}</td><td>${escapeHtml(event.type)}</td>` +
    `<td>${event.service === undefined ? '' : serviceLink(event.service, boardPath)}</td>` +
    `<td><a href="${job}" title="${id}">${escapeHtml(event.id.slice(0, 12))}</a></td><td>${escapeHtml(event.source)}</td>` +
    `<td class="${event.state === 'failed' ? 'bad' : ''}">${event.state}</td></tr>`
  );
}

/** What a page is drawn for. */
interface PageContext {
  boardPath: string;
  staleAfterMs: number;
  now: number;
  /** The service the recent events are filtered by. */
  service?: string;
  /** The services self-registration could not register. @defaultValue none */
  failing?: readonly FailingService[];
  /** The PostGIS mirror's layers. @defaultValue no section */
  mirror?: MirrorView;
}

/** The services self-registration could not register, with why and when it tries again; nothing when there is none. */
function failingHtml(failing: readonly FailingService[]): string {
  if (failing.length === 0) return '';
  const rows = failing.map(
    (state) =>
      `<tr data-failing="${escapeHtml(state.service)}"><td>${escapeHtml(state.service)}</td><td class="bad">${escapeHtml(state.reason)}</td>` +
      `<td>${escapeHtml(shortTime(new Date(state.since).toISOString()))}</td><td>${state.failures}</td>` +
      `<td>${escapeHtml(shortTime(new Date(state.retryAt).toISOString()))}</td></tr>`,
  );
  return (
    `<h2>Not registered (${failing.length})</h2><table id="failing"><thead><tr><th>Service</th><th>Why</th><th>Failing since</th>` +
    `<th>Attempts</th><th>Next attempt</th></tr></thead><tbody>${rows.join('')}</tbody></table>`
  );
}

/** The whole page: the services and their webhooks, then the recent events (of one service, when filtered). */
export function servicesHtml(reports: readonly ServiceReport[], events: readonly RecentEvent[], page: PageContext): string {
  const { boardPath, service } = page;
  const services =
    reports.length === 0
      ? '<p class="empty">No service yet: one is listed once geohook registers its webhook, receives a signed delivery for it, or polls it.</p>'
      : `<table id="services"><thead><tr>${serviceColumns.map((key) => `<th>${HEADINGS[key]}</th>`).join('')}</tr></thead><tbody>${reports.map((report) => rowHtml(report, page)).join('')}</tbody></table>`;
  const filter =
    service === undefined ? 'every service' : `${escapeHtml(service)} · <a href="${escapeHtml(boardPath)}/services">every service</a>`;
  const recent =
    events.length === 0
      ? '<p class="empty">No event yet.</p>'
      : `<table id="events"><thead><tr><th>Received</th><th>Type</th><th>Service</th><th>Event</th><th>Source</th><th>State</th></tr></thead><tbody>${events.map((event) => eventHtml(event, boardPath)).join('')}</tbody></table>`;
  return statusPageHtml(
    { title: 'services', heading: 'Services', refreshSeconds: SERVICES_REFRESH_SECONDS, boardPath },
    `${failingHtml(page.failing ?? [])}
${services}
${mirrorSectionHtml(page.mirror)}
<h2>Recent events: ${filter}</h2>
${recent}
<p class="note">Times are UTC; the page reloads every ${SERVICES_REFRESH_SECONDS} s. A webhook is stale when no registration pass checked it lately (a service of an earlier run). Upstream failures are the failed deliveries the GIS server reports for geohook's webhook (ArcGIS Enterprise); the watermark is the highest server generation handed to consumers (on ArcGIS Online, each layer's, as layer: generation), with the time it reads as.</p>`,
  );
}

/**
 * `GET <prefix>/services`, the page a sign-in lands on: each service's webhook state (stale when no pass checked
 * it lately), last delivery, upstream failures, watermark, last backfill and poll (docs/backfill.md#the-services-view),
 * then the recent events, of one service with `?service=`; behind the dashboard's credentials.
 */
export async function servicesPage(app: FastifyInstance, options: ServicesPageOptions): Promise<void> {
  app.get<{ Querystring: { service?: string } }>('/services', async (request, reply) => {
    const service = typeof request.query.service === 'string' && request.query.service !== '' ? request.query.service : undefined;
    let reports: ServiceReport[];
    let events: RecentEvent[];
    let failing: FailingService[];
    try {
      [reports, events, failing] = await Promise.all([
        options.services(),
        options.recent(service === undefined ? {} : { service }),
        options.failing(),
      ]);
    } catch (err) {
      return sendError(
        reply,
        new QueueUnavailableError(`cannot read the services from Redis: ${(err as Error).message}`, 5, { cause: err }),
      );
    }
    // The mirror's PostgreSQL being away is shown on the page, not an error of it.
    const mirror = await options.mirror?.().catch((err: unknown): MirrorView => ({ error: (err as Error).message }));
    const page = {
      boardPath: options.boardPath,
      staleAfterMs: options.staleAfterMs,
      now: Date.now(),
      ...(service === undefined ? {} : { service }),
      ...(mirror === undefined ? {} : { mirror }),
    };
    return sendPage(reply, servicesHtml(reports, events, { ...page, failing }));
  });
}
