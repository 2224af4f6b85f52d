import type { FastifyInstance } from 'fastify';
import type { ChangesScopeStatus, ChangesServiceStatus, ChangesStatus } from '../changes/changes-status.js';
import type { FailedRange } from '../changes/failed-ranges.js';
import { QueueUnavailableError } from '../errors.js';
import { sendError } from '../receiver/error-reply.js';
import { asTime, escapeHtml, sendPage, shortTime, statusPageHtml } from './page-html.js';

/** Options of {@link changesPage}. */
export interface ChangesPageOptions {
  /** Reads where change events stand (`readChangesStatus`). */
  status: () => Promise<ChangesStatus>;
  /** The dashboard's prefix, for the menu. */
  boardPath: string;
}

/** Seconds between two reloads of the page. */
export const CHANGES_REFRESH_SECONDS = 15;

const QUEUE_STATES = ['waiting', 'active', 'delayed', 'completed', 'failed'] as const;

/** A word the shell passes as it is, or the word in single quotes. */
const shellWord = (word: string): string => (/^[\w./#:-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`);

/** The command that resolves a scope's range again. */
export function replayCommand(service: string, scope: Pick<ChangesScopeStatus, 'layerId'>, from: number, to: number): string {
  const layer = scope.layerId === undefined ? '' : ` --layer ${scope.layerId}`;
  return `geohook changes replay --service ${shellWord(service)}${layer} --from-gen ${from} --to-gen ${to}`;
}

/** A range whose generations could be read. */
const replayable = ({ from, to }: FailedRange): boolean => Number.isSafeInteger(from) && Number.isSafeInteger(to) && from < to;

const generation = (value: number | undefined): string => (value === undefined ? '' : escapeHtml(asTime(String(value))));

const layerText = (scope: ChangesScopeStatus): string => (scope.layerId === undefined ? 'every layer' : `layer ${scope.layerId}`);

/** One row per scope; a service's name and its previous values span its scopes' rows. */
function scopeRows(service: ChangesServiceStatus): string[] {
  return service.scopes.map((scope, index) => {
    const spanned = index === 0 ? `<td rowspan="${service.scopes.length}">${escapeHtml(service.service)}</td>` : '';
    const kept = index === 0 ? `<td data-column="previousValues" rowspan="${service.scopes.length}">${service.previousValues}</td>` : '';
    const pending =
      scope.pending === undefined
        ? ''
        : `(${scope.pending[0]}, ${scope.pending[1]}]${scope.pendingSince === undefined ? '' : ` since ${shortTime(scope.pendingSince)}`}`;
    const failed =
      scope.lastError === undefined ? '' : `(${scope.lastError.from}, ${scope.lastError.to}] at ${shortTime(scope.lastError.at)}`;
    return (
      `<tr data-scope="${escapeHtml(scope.scope)}">${spanned}<td>${layerText(scope)}</td>` +
      `<td data-column="resolvedGen">${generation(scope.resolvedGen)}</td><td data-column="watermark">${generation(scope.watermark)}</td>` +
      `<td data-column="serverGen">${generation(scope.serverGen)}</td><td data-column="pending">${escapeHtml(pending)}</td>` +
      `<td data-column="jobs">${scope.jobs}</td>${kept}` +
      `<td data-column="lastError"${failed === '' ? '' : ' class="bad"'}>${escapeHtml(failed)}</td></tr>`
    );
  });
}

/** Every scope's last failed range: why, when, and the command that resolves it again. */
function failedHtml(services: readonly ChangesServiceStatus[]): string {
  const rows = services.flatMap((service) =>
    service.scopes.flatMap(({ lastError: failed, ...scope }) =>
      failed === undefined
        ? []
        : [
            `<tr data-failed="${escapeHtml(scope.scope)}"><td>${escapeHtml(service.service)}</td><td>${layerText(scope)}</td>` +
              `<td>(${failed.from}, ${failed.to}]</td><td class="bad wrap">${escapeHtml(failed.error)}</td>` +
              `<td>${escapeHtml(shortTime(failed.at))}</td>` +
              `<td>${replayable(failed) ? `<code>${escapeHtml(replayCommand(service.service, scope, failed.from, failed.to))}</code>` : ''}</td></tr>`,
          ],
    ),
  );
  if (rows.length === 0) return '<h2>Failed ranges</h2><p class="empty">No range has failed.</p>';
  return (
    `<h2>Failed ranges (${rows.length})</h2><table id="failed"><thead><tr><th>Service</th><th>Layer</th>` +
    `<th>Server generations</th><th>Error</th><th>Failed at</th><th>Resolve it again with</th></tr></thead>` +
    `<tbody>${rows.join('')}</tbody></table>`
  );
}

/** The jobs of the two queues of change events, per state. */
function queuesHtml(status: ChangesStatus): string {
  const row = (name: string, counts: Record<string, number>): string =>
    `<tr data-queue="${name}"><td>${name}</td>${QUEUE_STATES.map(
      (state) =>
        `<td data-column="${state}"${state === 'failed' && (counts[state] ?? 0) > 0 ? ' class="bad"' : ''}>${counts[state] ?? 0}</td>`,
    ).join('')}</tr>`;
  return (
    `<h2>Queues</h2><table id="queues"><thead><tr><th>Queue</th>${QUEUE_STATES.map((state) => `<th>${state}</th>`).join('')}</tr></thead>` +
    `<tbody>${row('change-ranges', status.ranges)}${row('change-events', status.queue)}</tbody></table>`
  );
}

/** The whole page: each followed scope, the failed ranges, the queues; or a note that no service is followed. */
export function changesHtml(status: ChangesStatus, boardPath: string): string {
  const body =
    status.services.length === 0
      ? '<p class="empty">Not following any service: change events are off. <code>CHANGES</code> (or the <code>changes</code> section of <code>GEOHOOK_CONFIG</code>) with <code>ADMIN_URL</code> names the feature services to follow.</p>'
      : `<table id="scopes"><thead><tr><th>Service</th><th>Layer</th><th>Resolved to</th><th>Watermark</th><th>Server generation</th>` +
        `<th>Resolving</th><th>Jobs in flight</th><th>Previous values kept</th><th>Last failed range</th></tr></thead>` +
        `<tbody>${status.services.flatMap(scopeRows).join('')}</tbody></table>\n${failedHtml(status.services)}\n${queuesHtml(status)}`;
  return statusPageHtml(
    { title: 'change events', heading: 'Change events', refreshSeconds: CHANGES_REFRESH_SECONDS, boardPath },
    `${body}
<p class="note">Times are UTC; the page reloads every ${CHANGES_REFRESH_SECONDS} s. A range is counted in <em>Resolved to</em> from when it is claimed, and shown under <em>Resolving</em> until its events are written; the watermark is the highest server generation handed to consumers, and the server generation the one the server last reported. Jobs in flight are the scope's ranges waiting, delayed or being resolved on <code>change-ranges</code>. A failed range stays listed until another range of the same scope fails; run its command with the receiver's configuration.</p>`,
  );
}

/**
 * `GET <prefix>/changes`: where change events stand (docs/changes.md#the-changes-view): per followed scope its
 * generations, the range being resolved, its jobs in flight, the previous values kept, its last failed range with
 * the command that replays it, and the queues; behind the dashboard's credentials.
 */
export async function changesPage(app: FastifyInstance, options: ChangesPageOptions): Promise<void> {
  app.get('/changes', async (_request, reply) => {
    let status: ChangesStatus;
    try {
      status = await options.status();
    } catch (err) {
      return sendError(
        reply,
        new QueueUnavailableError(`cannot read change events from Redis: ${(err as Error).message}`, 5, { cause: err }),
      );
    }
    return sendPage(reply, changesHtml(status, options.boardPath));
  });
}
