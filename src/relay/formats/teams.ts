import type { RoutedEvent } from '../../fanout/routed-event.js';
import { JSON_CONTENT_TYPE, type RelayRequest } from './relay-request.js';
import { summarizeEvent } from './summary.js';

/** The content type Teams takes an Adaptive Card attachment under. */
export const ADAPTIVE_CARD_CONTENT_TYPE = 'application/vnd.microsoft.card.adaptive';

/** The Adaptive Card version geohook writes: the highest Teams renders in every client. */
export const ADAPTIVE_CARD_VERSION = '1.4';

/**
 * The Adaptive Card of an event: its summary line in bold, then its facts. Teams renders a subset of Markdown in
 * both; values are sent as they are, since Adaptive Cards have no escape for it.
 */
export function teamsCard(event: RoutedEvent): Record<string, unknown> {
  const { line, facts } = summarizeEvent(event);
  return {
    $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
    type: 'AdaptiveCard',
    version: ADAPTIVE_CARD_VERSION,
    fallbackText: line,
    body: [
      { type: 'TextBlock', text: line, weight: 'bolder', size: 'medium', wrap: true },
      { type: 'FactSet', facts: facts.map(({ title, value }) => ({ title, value })) },
    ],
  };
}

/**
 * An event as a Teams channel's workflow webhook ("When a Teams webhook request is received") takes a message:
 * `{"type":"message","attachments":[{"contentType":"application/vnd.microsoft.card.adaptive","content":<card>}]}`.
 */
export function formatTeams(event: RoutedEvent): RelayRequest {
  const message = {
    type: 'message',
    attachments: [{ contentType: ADAPTIVE_CARD_CONTENT_TYPE, contentUrl: null, content: teamsCard(event) }],
  };
  return { headers: { 'content-type': JSON_CONTENT_TYPE }, body: JSON.stringify(message) };
}
