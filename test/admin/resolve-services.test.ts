import t from 'tap';
import { resolveServices } from '../../src/admin/resolve-services.js';
import type { ServiceRecord } from '../../src/admin/types.js';
import { patternRegExp } from '../../src/arcgis/service-name.js';

const record = (folderName: string, serviceName: string, type: string): ServiceRecord => ({
  id: serviceName,
  folderName,
  serviceName,
  type,
});
const catalogue = [
  record('Hosted', 'Parcels', 'FeatureServer'),
  record('Hosted', 'Parcels', 'MapServer'),
  record('Hosted', 'Roads', 'FeatureServer'),
  record('Tools', 'Buffer', 'GPServer'),
  record('/', 'Rivers', 'FeatureServer'),
];

t.test('a pattern: * is any characters, / included, ? one character, the rest literal', async (t) => {
  t.ok(patternRegExp('*.FeatureServer').test('Hosted/Parcels.FeatureServer'));
  t.ok(patternRegExp('Hosted/*').test('Hosted/Parcels.FeatureServer'));
  t.notOk(patternRegExp('Hosted/*').test('Tools/Buffer.GPServer'));
  t.ok(patternRegExp('Hosted/Road?.FeatureServer').test('Hosted/Roads.FeatureServer'));
  t.notOk(patternRegExp('Hosted/Road?.FeatureServer').test('Hosted/RoadsXFeatureServer'), 'a dot is a dot');
});

t.test('entries resolve against the catalogue: named services, pattern matches of webhook types, each once', async (t) => {
  t.strictSame(resolveServices(['Tools/Buffer.GPServer', 'Hosted/*', '*.FeatureServer'], catalogue), {
    services: ['Tools/Buffer.GPServer', 'Hosted/Parcels.FeatureServer', 'Hosted/Roads.FeatureServer', 'Rivers.FeatureServer'],
    missing: [],
    unmatched: [],
  });
  t.strictSame(resolveServices(['Hosted/Gone.FeatureServer', 'Rivers.FeatureServer', 'Empty/*'], catalogue), {
    services: ['Rivers.FeatureServer'],
    missing: ['Hosted/Gone.FeatureServer'],
    unmatched: ['Empty/*'],
  });
  t.strictSame(resolveServices(['Hosted/*.MapServer'], catalogue).services, [], 'a map service takes no webhook');
});
