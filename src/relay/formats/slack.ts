import type { RoutedEvent } from '../../fanout/routed-event.js';
import { JSON_CONTENT_TYPE, type RelayRequest } from './relay-request.js';
import { summarizeEvent, summaryAttachments } from './summary.js';

/** Longest text of a section block Slack accepts. */
export const MAX_SECTION_CHARS = 3000;

/** Most elements of a context block Slack accepts. */
export const MAX_CONTEXT_ELEMENTS = 10;

/** Text made safe for Slack's mrkdwn: `&`, `<` and `>` escaped, as Slack requires (no link or mention can be forged). */
export const escapeMrkdwn = (text: string): string => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

/** Escaped text cut to `max` characters, never inside an entity (`&amp;` stays whole). */
function cutEscaped(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1).replace(/&[a-z]*$/, '')}…` : text;
}

/** Pictures a message shows at most (Slack takes 50 blocks). */
export const MAX_IMAGE_BLOCKS = 10;

/** Longest alt text of an image block Slack accepts. */
const MAX_ALT_TEXT_CHARS = 2000;

/**
 * The linked attachments of an event as blocks: an image block per picture (Slack fetches geohook's signed URL),
 * then one section linking the others, `<url|name>` with both escaped.
 */
function attachmentBlocks(event: RoutedEvent): Record<string, unknown>[] {
  const linked = summaryAttachments(event).filter((attachment) => attachment.url !== undefined);
  const images = linked.filter(({ image }) => image).slice(0, MAX_IMAGE_BLOCKS);
  const links = linked
    .filter(({ image }) => !image)
    .map(({ name, url }) => `<${escapeMrkdwn(url!)}|${escapeMrkdwn(name)}>`)
    .join('\n');
  return [
    ...images.map(({ name, url }) => ({ type: 'image', image_url: url, alt_text: name.slice(0, MAX_ALT_TEXT_CHARS) })),
    ...(links === '' ? [] : [{ type: 'section', text: { type: 'mrkdwn', text: cutEscaped(links, MAX_SECTION_CHARS), verbatim: true } }]),
  ];
}

/**
 * An event as a Slack incoming webhook takes a message: `text` (the notification and the fallback) and `blocks`,
 * a section with the summary line and a context block with its facts, every value escaped; `verbatim` so that
 * Slack does not turn names or URLs in the values into links; then the event's linked photos and attachments.
 */
export function formatSlack(event: RoutedEvent): RelayRequest {
  const { line, facts } = summarizeEvent(event);
  const text = cutEscaped(escapeMrkdwn(line), MAX_SECTION_CHARS);
  const elements = facts.slice(0, MAX_CONTEXT_ELEMENTS).map(({ title, value }) => ({
    type: 'mrkdwn',
    text: cutEscaped(`*${escapeMrkdwn(title)}:* ${escapeMrkdwn(value)}`, MAX_SECTION_CHARS),
    verbatim: true,
  }));
  const message = {
    text,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text, verbatim: true } },
      { type: 'context', elements },
      ...attachmentBlocks(event),
    ],
  };
  return { headers: { 'content-type': JSON_CONTENT_TYPE }, body: JSON.stringify(message) };
}
