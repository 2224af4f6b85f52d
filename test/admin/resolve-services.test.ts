import t from 'tap';
import { resolveServices } from '../../src/admin/resolve-services.js';
import type { ServiceRecord } from '../../src/admin/types.js';
import { patternMatcher } from '../../src/arcgis/service-name.js';

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
  t.ok(patternMatcher('*.FeatureServer')('Hosted/Parcels.FeatureServer'));
  t.ok(patternMatcher('Hosted/*')('Hosted/Parcels.FeatureServer'));
  t.notOk(patternMatcher('Hosted/*')('Tools/Buffer.GPServer'));
  t.ok(patternMatcher('Hosted/Road?.FeatureServer')('Hosted/Roads.FeatureServer'));
  t.notOk(patternMatcher('Hosted/Road?.FeatureServer')('Hosted/RoadsXFeatureServer'), 'a dot is a dot');
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

t.test(
  'issue 51 (N9): a pattern never matches a catalogue name ArcGIS could not have made (over 128 characters, other characters)',
  async (t) => {
    const hostile = [record('Hosted', 'Parcels'.repeat(6000), 'FeatureServer'), record('Hosted', 'Parcels <b>', 'FeatureServer')];
    t.strictSame(resolveServices(['Hosted/*Parcels*.FeatureServer'], [...hostile, ...catalogue]), {
      services: ['Hosted/Parcels.FeatureServer'],
      missing: [],
      unmatched: [],
    });
    const longest = record('Hosted', 'P'.repeat(128), 'FeatureServer');
    t.strictSame(
      resolveServices(['Hosted/*'], [longest]).services,
      [`Hosted/${'P'.repeat(128)}.FeatureServer`],
      '128 characters still match',
    );
  },
);
