import type { FastifyInstance } from 'fastify';
import { GeohookError, QueueUnavailableError } from '../errors.js';
import { sendError } from '../receiver/error-reply.js';
import type { RelayDryRun, RouteEvent } from '../relay/dry-run.js';
import { escapeHtml, sendPage, shortTime, statusPageHtml } from './page-html.js';

/** What the dry run of the relays view needs (`RelayDryRunner` is one). */
export interface RelayDryRunSource {
  recent(route: string, limit?: number): Promise<RouteEvent[]>;
  run(route: string, event: { id: string }): Promise<RelayDryRun>;
}

/** Options of {@link relayDryRunPage}. */
export interface RelayDryRunPageOptions {
  dryRun: RelayDryRunSource;
  boardPath: string;
}

/** Events of a route listed to try. */
export const DRY_RUN_EVENTS = 20;

const pretty = (value: unknown): string => escapeHtml(JSON.stringify(value, null, 2) ?? 'null');

/** The result of one dry run: the verdict and why, the headers, the body (or the transform's error). Every value escaped. */
function resultHtml(result: RelayDryRun): string {
  const verdict = `<p id="verdict" class="${result.matches ? 'ok' : 'bad'}"><strong>${result.matches ? 'Taken' : 'Not taken'}</strong>: ${escapeHtml(result.why)}</p>`;
  if (result.error !== undefined) return `${verdict}<p id="error" class="bad">${escapeHtml(result.error)}</p>`;
  const headers = Object.entries(result.headers)
    .map(([name, value]) => `<tr><td>${escapeHtml(name)}</td><td class="wrap">${escapeHtml(value)}</td></tr>`)
    .join('');
  return `${verdict}<h2>Headers</h2><table id="headers"><tbody>${headers}</tbody></table><h2>Body</h2><pre id="body">${pretty(result.body)}</pre>`;
}

/** The page: the route's last events, each a link that tries it, and the result of the one chosen. */
export function dryRunHtml(route: string, events: readonly RouteEvent[], result: RelayDryRun | undefined, boardPath: string): string {
  const base = `${boardPath}/relays/${encodeURIComponent(route)}/dry-run`;
  const rows = events
    .map(
      (event) =>
        `<tr><td><a href="${escapeHtml(`${base}?id=${encodeURIComponent(event.id)}`)}">${escapeHtml(event.id.slice(0, 16))}</a></td>` +
        `<td>${escapeHtml(event.type)}</td><td>${escapeHtml(event.state)}</td><td>${escapeHtml(shortTime(event.addedAt))}</td></tr>`,
    )
    .join('');
  const list =
    events.length === 0
      ? '<p class="empty">The route has taken no event yet (or none is kept): <code>geohook relay test --file</code> tries one of your own.</p>'
      : `<table id="events"><thead><tr><th>Event</th><th>Type</th><th>State</th><th>Added</th></tr></thead><tbody>${rows}</tbody></table>`;
  const shown =
    result === undefined ? '' : `<h2>Event ${escapeHtml(result.event.id)} (${escapeHtml(result.event.type)})</h2>${resultHtml(result)}`;
  return statusPageHtml(
    { title: `dry run of ${escapeHtml(route)}`, heading: `Dry run of route ${escapeHtml(route)}`, refreshSeconds: 3600, boardPath },
    `${shown}<h2>Its last events</h2>${list}
<p class="note">Nothing is sent: this is what the route would send now, with its current filters and transform (<code>geohook relay test</code>). Secrets, signatures and the route's own headers are redacted.</p>`,
  );
}

/** `GET <prefix>/relays/:route/dry-run[?id=ID]`: a route tried on its last events (docs/relays.md#the-relays-view). */
export async function relayDryRunPage(app: FastifyInstance, options: RelayDryRunPageOptions): Promise<void> {
  app.get<{ Params: { route: string }; Querystring: { id?: string } }>('/relays/:route/dry-run', async (request, reply) => {
    const { route } = request.params;
    const { id } = request.query;
    try {
      const [events, result] = await Promise.all([
        options.dryRun.recent(route, DRY_RUN_EVENTS),
        typeof id === 'string' && id !== '' ? options.dryRun.run(route, { id }) : undefined,
      ]);
      return sendPage(reply, dryRunHtml(route, events, result, options.boardPath));
    } catch (err) {
      if (err instanceof GeohookError) return sendError(reply, err);
      return sendError(
        reply,
        new QueueUnavailableError(`cannot read the route's events from Redis: ${(err as Error).message}`, 5, { cause: err }),
      );
    }
  });
}
