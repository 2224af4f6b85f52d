import type { FastifyInstance } from 'fastify';
import { QueueUnavailableError } from '../errors.js';
import { sendError } from '../receiver/error-reply.js';
import type { RelayRouteStatus } from '../relay/relay-status.js';
import { escapeHtml, sendPage, shortTime, statusPageHtml } from './page-html.js';
import { relayDryRunPage, type RelayDryRunSource } from './relay-dry-run-page.js';

/** Options of {@link relaysPage}. */
export interface RelaysPageOptions {
  /** Reads where the routes stand (`readRelayStatus`). */
  status: () => Promise<{ routes: RelayRouteStatus[] }>;
  /** The dashboard's prefix, for the menu. */
  boardPath: string;
  /** Dry runs of a route on its last events (`RelayDryRunner`); none: no dry-run link. */
  dryRun?: RelayDryRunSource;
}

/** Seconds between two reloads of the page. */
export const RELAYS_REFRESH_SECONDS = 15;

const when = (time: string | undefined): string => (time === undefined ? '' : escapeHtml(shortTime(time)));

/** One row per route: its counts, its last error, and the command that replays its dead letters. */
function routeRow(route: RelayRouteStatus, boardPath: string | undefined): string {
  const cell = (column: string, value: string | number, bad = false): string =>
    `<td data-column="${column}"${bad ? ' class="bad"' : ''}>${value}</td>`;
  return (
    `<tr data-route="${escapeHtml(route.name)}"><td>${escapeHtml(route.name)}</td><td>${escapeHtml(route.format)}</td>` +
    cell('delivered', route.delivered) +
    cell('failing', route.failing, route.failing > 0) +
    cell('deadLetters', route.deadLetters, route.deadLetters > 0) +
    cell('pending', route.pending) +
    cell('nextTryAt', when(route.nextTryAt)) +
    `<td data-column="lastError" class="wrap${route.lastError === undefined ? '' : ' bad'}">${escapeHtml(route.lastError ?? '')}</td>` +
    cell('lastErrorAt', when(route.lastErrorAt)) +
    cell('lastDeliveredAt', when(route.lastDeliveredAt)) +
    `<td>${route.deadLetters > 0 ? `<code>${escapeHtml(`geohook relay replay --name ${route.name}`)}</code>` : ''}</td>` +
    (boardPath === undefined
      ? ''
      : `<td><a href="${escapeHtml(`${boardPath}/relays/${encodeURIComponent(route.name)}/dry-run`)}">Dry run</a></td>`) +
    '</tr>'
  );
}

/** The whole page: each route, or a note that none is configured. Every value is escaped. */
export function relaysHtml(routes: readonly RelayRouteStatus[], boardPath: string, dryRun = false): string {
  const body =
    routes.length === 0
      ? '<p class="empty">No relay route: the <code>relays</code> section of <code>GEOHOOK_CONFIG</code> names them.</p>'
      : `<table id="routes"><thead><tr><th>Route</th><th>Format</th><th>Delivered</th><th>Failed tries in a row</th>` +
        `<th>Dead letters</th><th>Pending</th><th>Next try</th><th>Last error</th><th>at</th><th>Last delivered</th><th>Replay with</th>${dryRun ? '<th>Try</th>' : ''}</tr></thead>` +
        `<tbody>${routes.map((route) => routeRow(route, dryRun ? boardPath : undefined)).join('')}</tbody></table>`;
  return statusPageHtml(
    { title: 'relays', heading: 'Relays', refreshSeconds: RELAYS_REFRESH_SECONDS, boardPath },
    `${body}
<p class="note">Times are UTC; the page reloads every ${RELAYS_REFRESH_SECONDS} s. The next try is when the route's earliest event waiting for a retry is due. A dead letter is an event that used every try of its route; run the command with the receiver's configuration once the endpoint is fixed. URLs and secrets are not shown.</p>`,
  );
}

/** `GET <prefix>/relays`: where each relay route stands (docs/relays.md#the-relays-view), behind the dashboard's credentials. */
export async function relaysPage(app: FastifyInstance, options: RelaysPageOptions): Promise<void> {
  app.get('/relays', async (_request, reply) => {
    let routes: RelayRouteStatus[];
    try {
      routes = (await options.status()).routes;
    } catch (err) {
      return sendError(reply, new QueueUnavailableError(`cannot read the relays from Redis: ${(err as Error).message}`, 5, { cause: err }));
    }
    return sendPage(reply, relaysHtml(routes, options.boardPath, options.dryRun !== undefined));
  });
  if (options.dryRun !== undefined) await app.register(relayDryRunPage, { dryRun: options.dryRun, boardPath: options.boardPath });
}
