import type { MirrorLayerStatus } from '../mirror/mirror-status.js';
import { escapeHtml } from './page-html.js';

/** What the services page shows of the PostGIS mirror: its layers, or why they could not be read. */
export type MirrorView = { layers: MirrorLayerStatus[] } | { error: string };

const cell = (column: string, value: string, bad = false): string =>
  `<td data-column="${column}"${bad ? ' class="bad"' : ''}>${escapeHtml(value)}</td>`;

/**
 * The mirror's section of the services page (docs/mirror.md): per layer its table, rows, the generation it equals
 * and how far behind it is, and its last failure; nothing when no service is mirrored. Every value is escaped (a
 * failure's message may quote what a server answered).
 */
export function mirrorSectionHtml(view: MirrorView | undefined): string {
  if (view === undefined) return '';
  if ('error' in view) return `<h2>PostGIS mirror</h2><p class="bad" id="mirror-error">${escapeHtml(`Not readable: ${view.error}`)}</p>`;
  if (view.layers.length === 0) return '<h2>PostGIS mirror</h2><p class="empty">No table yet: each layer gets one at its initial copy.</p>';
  const rows = view.layers.map(
    (layer) =>
      `<tr data-mirror="${escapeHtml(`${layer.service}#${layer.layer}`)}">` +
      [
        cell('service', layer.service),
        cell('layer', String(layer.layer)),
        cell('table', layer.table ?? ''),
        cell('rows', String(layer.rows)),
        cell('serverGen', layer.serverGen === null ? '' : String(layer.serverGen)),
        cell('lagGens', String(layer.lagGens), layer.lagGens > 0),
        cell('lagSeconds', String(layer.lagSeconds), layer.lagSeconds > 60),
        cell('lastError', layer.lastError ?? '', layer.lastError !== null),
      ].join('') +
      '</tr>',
  );
  return (
    '<h2>PostGIS mirror</h2><table id="mirror"><thead><tr><th>Service</th><th>Layer</th><th>Table</th><th>Rows</th>' +
    '<th>Generation</th><th>Behind (generations)</th><th>Behind (s)</th><th>Last failure</th></tr></thead>' +
    `<tbody>${rows.join('')}</tbody></table>`
  );
}
