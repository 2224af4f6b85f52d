import t from 'tap';
import { mirrorSectionHtml } from '../../src/dashboard/mirror-section.js';

const layer = {
  service: 'Hosted/Parcels.FeatureServer',
  layer: 0,
  table: 'geohook.parcels_parcels',
  rows: 44,
  serverGen: 1234,
  lagGens: 0,
  lagSeconds: 0,
  lastError: null,
};

t.test('the services page shows each mirrored layer: table, rows, generation, lag, last failure', async (t) => {
  const html = mirrorSectionHtml({
    layers: [layer, { ...layer, layer: 1, table: null, rows: 0, serverGen: null, lagGens: 3, lastError: 'down' }],
  });
  t.match(html, '<tr data-mirror="Hosted/Parcels.FeatureServer#0"><td data-column="service">Hosted/Parcels.FeatureServer</td>');
  t.match(html, '<td data-column="rows">44</td><td data-column="serverGen">1234</td><td data-column="lagGens">0</td>');
  t.match(html, '<td data-column="lagGens" class="bad">3</td>');
  t.match(html, '<td data-column="lastError" class="bad">down</td>');
  t.equal(mirrorSectionHtml(undefined), '', 'no section without a mirror');
});

t.test('every value of the mirror section is escaped, a failure message that quotes a server included', async (t) => {
  const hostile = '<script>alert(1)</script>"&';
  const html = mirrorSectionHtml({ layers: [{ ...layer, service: hostile, lastError: hostile }] });
  t.notMatch(html, '<script>');
  t.match(html, '&lt;script&gt;alert(1)&lt;/script&gt;&quot;&amp;');
  t.notMatch(mirrorSectionHtml({ error: hostile }), '<script>');
});
