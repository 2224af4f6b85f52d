import type { RoutedEvent } from '../../fanout/routed-event.js';
import { JSON_CONTENT_TYPE, type RelayRequest } from './relay-request.js';
import { summarizeEvent, summaryAttachments } from './summary.js';

/** The content type Teams takes an Adaptive Card attachment under. */
export const ADAPTIVE_CARD_CONTENT_TYPE = 'application/vnd.microsoft.card.adaptive';

/** The Adaptive Card version geohook writes: the highest Teams renders in every client. */
export const ADAPTIVE_CARD_VERSION = '1.4';

/** Markdown's characters as Teams is sent them: fullwidth forms, which read alike and mark nothing up. */
const FULLWIDTH: Readonly<Record<string, string>> = { '[': '［', ']': '］', '*': '＊', '~': '～', _: '＿' };

/**
 * Text that Teams shows as it is: Teams renders a subset of Markdown in a card's text and facts, and Adaptive Cards
 * have no escape for it, so `[` `]` `*` `~` become their fullwidth forms (no link, emphasis or strike can be
 * written), as does `_` unless it joins letters or digits (`parcel_id`, where Markdown reads no emphasis), and
 * line breaks become spaces (a value cannot start a line of its own).
 */
export function plainTeamsText(text: string): string {
  return text
    .replace(/[\r\n]+/g, ' ')
    .replace(/[[\]*~]|(?<![\p{L}\p{N}])_|_(?![\p{L}\p{N}])/gu, (character) => FULLWIDTH[character] ?? character);
}

/** Pictures and links a card shows at most (a card must stay under Teams' 28 KB). */
export const MAX_CARD_IMAGES = 10;
export const MAX_CARD_LINKS = 6;

/**
 * The linked attachments of an event as card elements: images in an ImageSet, anything else as buttons that open
 * its link. Links are geohook's own signed URLs; names are made plain.
 */
function attachmentElements(event: RoutedEvent): Record<string, unknown>[] {
  const linked = summaryAttachments(event).filter((attachment) => attachment.url !== undefined);
  const images = linked.filter(({ image }) => image).slice(0, MAX_CARD_IMAGES);
  const others = linked.filter(({ image }) => !image).slice(0, MAX_CARD_LINKS);
  return [
    ...(images.length === 0
      ? []
      : [
          {
            type: 'ImageSet',
            imageSize: 'Medium',
            images: images.map(({ name, url }) => ({ type: 'Image', url, altText: plainTeamsText(name) })),
          },
        ]),
    ...(others.length === 0
      ? []
      : [{ type: 'ActionSet', actions: others.map(({ name, url }) => ({ type: 'Action.OpenUrl', title: plainTeamsText(name), url })) }]),
  ];
}

/**
 * The Adaptive Card of an event: its summary line in bold, then its facts, then its linked photos (an ImageSet) and
 * other attachments (buttons), every text made plain ({@link plainTeamsText}): the values come from edits, payloads
 * and names anyone with edit rights may choose.
 */
export function teamsCard(event: RoutedEvent): Record<string, unknown> {
  const summary = summarizeEvent(event);
  const line = plainTeamsText(summary.line);
  return {
    $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
    type: 'AdaptiveCard',
    version: ADAPTIVE_CARD_VERSION,
    fallbackText: line,
    body: [
      { type: 'TextBlock', text: line, weight: 'bolder', size: 'medium', wrap: true },
      { type: 'FactSet', facts: summary.facts.map(({ title, value }) => ({ title: plainTeamsText(title), value: plainTeamsText(value) })) },
      ...attachmentElements(event),
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
