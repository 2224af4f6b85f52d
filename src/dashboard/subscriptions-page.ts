import type { FastifyInstance } from 'fastify';
import { QueueUnavailableError } from '../errors.js';
import { sendError } from '../receiver/error-reply.js';
import type { SubscriptionStatus } from '../subscriptions/subscription-status.js';
import { escapeHtml, sendPage, statusPageHtml } from './page-html.js';

/** Options of {@link subscriptionsPage}. */
export interface SubscriptionsPageOptions {
  /** Reads every subscription's definition and counts (`readSubscriptionStatus`). */
  status: () => Promise<SubscriptionStatus[]>;
  /** The dashboard's prefix, for the menu. */
  boardPath: string;
}

/** Seconds between two reloads of the page. */
export const SUBSCRIPTIONS_REFRESH_SECONDS = 15;

/** One row per subscription: what it takes, its counts, and the command that attaches a worker to it. */
function subscriptionRow(subscription: SubscriptionStatus): string {
  const cell = (column: string, value: string | number, bad = false): string =>
    `<td data-column="${column}"${bad ? ' class="bad"' : ''}>${value}</td>`;
  return (
    `<tr data-subscription="${escapeHtml(subscription.name)}"><td>${escapeHtml(subscription.name)}</td>` +
    cell('types', escapeHtml(subscription.types.join(', '))) +
    cell('waiting', subscription.waiting, subscription.waiting >= subscription.backlog.count) +
    cell('lagSeconds', Math.round(subscription.lagSeconds), subscription.lagSeconds >= subscription.backlog.ageSeconds) +
    cell('completed', subscription.completed) +
    cell('deadLetters', subscription.deadLetters, subscription.deadLetters > 0) +
    cell('dropped', subscription.dropped, subscription.dropped > 0) +
    cell('origin', subscription.origin) +
    `<td><code>${escapeHtml(`geohook consume --subscription ${subscription.name}`)}</code></td></tr>`
  );
}

/** The whole page: each subscription, or a note that there is none. Every value is escaped. */
export function subscriptionsHtml(subscriptions: readonly SubscriptionStatus[], boardPath: string): string {
  const body =
    subscriptions.length === 0
      ? '<p class="empty">No subscription: <code>geohook subscriptions create</code> or the <code>subscriptions</code> section of <code>GEOHOOK_CONFIG</code> makes one.</p>'
      : `<table id="subscriptions"><thead><tr><th>Subscription</th><th>Types</th><th>Waiting</th><th>Lag (s)</th>` +
        `<th>Handled</th><th>Dead letters</th><th>Dropped</th><th>Made by</th><th>Attach a worker with</th></tr></thead>` +
        `<tbody>${subscriptions.map(subscriptionRow).join('')}</tbody></table>`;
  return statusPageHtml(
    { title: 'subscriptions', heading: 'Subscriptions', refreshSeconds: SUBSCRIPTIONS_REFRESH_SECONDS, boardPath },
    `${body}
<p class="note">The page reloads every ${SUBSCRIPTIONS_REFRESH_SECONDS} s. Lag is how long the oldest waiting event has waited; past its backlog cap a subscription drops its oldest waiting events. Each subscription's queue <code>sub-&lt;name&gt;</code> is on the board, with its dead letters.</p>`,
  );
}

/** `GET <prefix>/subscriptions`: where each subscription stands (docs/subscriptions.md#watching-the-subscriptions), behind the dashboard's credentials. */
export async function subscriptionsPage(app: FastifyInstance, options: SubscriptionsPageOptions): Promise<void> {
  app.get('/subscriptions', async (_request, reply) => {
    let subscriptions: SubscriptionStatus[];
    try {
      subscriptions = await options.status();
    } catch (err) {
      return sendError(
        reply,
        new QueueUnavailableError(`cannot read the subscriptions from Redis: ${(err as Error).message}`, 5, { cause: err }),
      );
    }
    return sendPage(reply, subscriptionsHtml(subscriptions, options.boardPath));
  });
}
