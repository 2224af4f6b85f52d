import type { FastifyReply } from 'fastify';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Service names come from payloads, errors from servers: every text a page shows is escaped. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (char) => ESCAPES[char]!);

/** `2026-11-25T17:40:12.345Z` → `2026-11-25 17:40:12`, the page saying once that times are UTC. */
export const shortTime = (iso: string): string => iso.replace('T', ' ').replace(/\.\d+Z$/, '');

/** Epoch milliseconds of 2000 to 2100: a server generation that reads as a time (ArcGIS's usually do). */
export const asTime = (generation: string): string => {
  const value = Number(generation);
  return value >= 946_684_800_000 && value < 4_102_444_800_000 ? `${generation} (${shortTime(new Date(value).toISOString())})` : generation;
};

/**
 * The style of the dashboard's own pages: inline, as the policy allows no other source. Cells wrap (a 64-hex id or
 * a long service name anywhere) so that every table fits a 1024 px window.
 */
export const PAGE_STYLE = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #1f2937; }
header { display: flex; flex-wrap: wrap; column-gap: 1.5rem; align-items: baseline; }
h1 { font-size: 1.4rem; margin: 0 0 1rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .4rem .5rem; border-bottom: 1px solid #e5e7eb; overflow-wrap: anywhere; }
th { background: #f3f4f6; font-weight: 600; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; }
td.ok { color: #047857; font-weight: 600; }
td.bad { color: #b91c1c; font-weight: 600; }
td.stale, tr.stale td { color: #6b7280; }
td.wrap { white-space: normal; }
span.why { display: block; font-weight: normal; color: #6b7280; font-size: .85em; }
span.product { color: #6b7280; font-size: .85em; margin-left: .4rem; }
nav { display: flex; flex-wrap: wrap; column-gap: 1rem; }
h2 { font-size: 1.1rem; margin: 2rem 0 .5rem; }
code { font: 13px ui-monospace, monospace; background: #f3f4f6; padding: .1rem .3rem; }
p.note { color: #6b7280; }`;

/** The menu of the dashboard's own pages and the board. */
export const navHtml = (boardPath: string): string => {
  const path = escapeHtml(boardPath);
  return (
    `<nav><a href="${path}/services">Services and recent events</a><a href="${path}/changes">Change events</a>` +
    `<a href="${path}/relays">Relays</a><a href="${path}/subscriptions">Subscriptions</a>` +
    `<a href="${path}/">Queues (jobs, retries, dead letters)</a></nav>`
  );
};

/** A status page of the dashboard's own: its title, its heading with the menu, `content`, and a reload every `refreshSeconds`. */
export const statusPageHtml = (
  page: { title: string; heading: string; refreshSeconds: number; boardPath: string },
  content: string,
): string =>
  `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>geohook · ${page.title}</title>
<meta http-equiv="refresh" content="${page.refreshSeconds}"><style>${PAGE_STYLE}</style></head>
<body><header><h1>${page.heading}</h1>${navHtml(page.boardPath)}</header>
${content}
</body></html>
`;

/** Sends a page of the dashboard's own: never cached, no script, no source but its inline style, never framed. */
export function sendPage(reply: FastifyReply, html: string): FastifyReply {
  return reply
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
    .send(html);
}
