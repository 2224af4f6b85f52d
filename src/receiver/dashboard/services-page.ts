import type { FastifyInstance } from 'fastify';
import { QueueUnavailableError } from '../../errors.js';
import { serviceColumns, serviceReportRow, type ServiceReport, type ServiceRow } from '../../queue/service-report.js';
import { sendError } from '../error-reply.js';

/** Options of {@link servicesPage}. */
export interface ServicesPageOptions {
  /** Reads every service's report from Redis. */
  services: () => Promise<ServiceReport[]>;
  /** The dashboard's prefix, for the link back to the queues. */
  boardPath: string;
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

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Service names come from payloads: every text is escaped. */
const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (char) => ESCAPES[char]!);

/** `2026-11-25T17:40:12.345Z` → `2026-11-25 17:40:12`, the page saying once that times are UTC. */
const shortTime = (iso: string): string => iso.replace('T', ' ').replace(/\.\d+Z$/, '');

function rowHtml(report: ServiceReport): string {
  const row = serviceReportRow(report);
  const state = report.webhook === undefined ? '' : report.webhook.active ? 'ok' : 'bad';
  const cells = serviceColumns.map((key) => {
    const text = key.startsWith('last') && row[key] !== '' ? shortTime(row[key]) : row[key];
    const mark =
      key === 'webhook' && state !== '' ? ` class="${state}"` : key === 'failures24h' && report.recentFailures > 0 ? ' class="bad"' : '';
    return `<td data-column="${key}"${mark}>${escapeHtml(text)}</td>`;
  });
  return `<tr data-service="${escapeHtml(report.service)}">${cells.join('')}</tr>`;
}

const STYLE = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 2rem; color: #1f2937; }
header { display: flex; gap: 1.5rem; align-items: baseline; }
h1 { font-size: 1.4rem; margin: 0 0 1rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .45rem .7rem; border-bottom: 1px solid #e5e7eb; white-space: nowrap; }
th { background: #f3f4f6; font-weight: 600; white-space: normal; }
td.ok { color: #047857; font-weight: 600; }
td.bad { color: #b91c1c; font-weight: 600; }
p.note { color: #6b7280; }`;

/** The whole page: a table of the services, or a line saying why there is none yet. */
export function servicesHtml(reports: readonly ServiceReport[], boardPath: string): string {
  const body =
    reports.length === 0
      ? '<p class="empty">No service yet: one is listed once geohook registers its webhook, receives a signed delivery for it, or polls it.</p>'
      : `<table><thead><tr>${serviceColumns.map((key) => `<th>${HEADINGS[key]}</th>`).join('')}</tr></thead><tbody>${reports.map(rowHtml).join('')}</tbody></table>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>geohook · services</title>
<meta http-equiv="refresh" content="${SERVICES_REFRESH_SECONDS}"><style>${STYLE}</style></head>
<body><header><h1>Services</h1><a href="${escapeHtml(boardPath)}/">Queues</a></header>
${body}
<p class="note">Times are UTC; the page reloads every ${SERVICES_REFRESH_SECONDS} s. Upstream failures are the failed deliveries the GIS server reports for geohook's webhook (ArcGIS Enterprise); the watermark is the highest server generation handed to consumers (on ArcGIS Online, each layer's, as layer: generation).</p>
</body></html>
`;
}

/**
 * `GET <prefix>/services`: each service's webhook state, last delivery, upstream failures, watermark, last
 * backfill and poll (docs/backfill.md#the-services-view), behind the dashboard's credentials.
 */
export async function servicesPage(app: FastifyInstance, options: ServicesPageOptions): Promise<void> {
  app.get('/services', async (_request, reply) => {
    let reports: ServiceReport[];
    try {
      reports = await options.services();
    } catch (err) {
      return sendError(
        reply,
        new QueueUnavailableError(`cannot read the services from Redis: ${(err as Error).message}`, 5, { cause: err }),
      );
    }
    return reply
      .type('text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
      .send(servicesHtml(reports, options.boardPath));
  });
}
