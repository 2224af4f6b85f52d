import t from 'tap';
import { parseServiceName, updateDefinitionPath, webhookPath } from '../../src/arcgis/service-name.js';
import { GeohookError } from '../../src/errors.js';

t.test('folder/name.Type addresses services/folder/name.Type', async (t) => {
  t.same(parseServiceName('Tools/Buffer.GPServer'), {
    folder: 'Tools',
    name: 'Buffer',
    type: 'GPServer',
    path: 'services/Tools/Buffer.GPServer',
  });
});

t.test('name.Type addresses services/name.Type', async (t) => {
  t.same(parseServiceName('Parcels.FeatureServer'), {
    folder: undefined,
    name: 'Parcels',
    type: 'FeatureServer',
    path: 'services/Parcels.FeatureServer',
  });
});

t.test('segments are URL-encoded', async (t) => {
  t.equal(parseServiceName('My Folder/Büffer.GPServer').path, 'services/My%20Folder/B%C3%BCffer.GPServer');
  t.equal(webhookPath('Buffer.GPServer', 'a/b'), 'services/Buffer.GPServer/webhooks/a%2Fb');
});

t.test('a name without .Type is refused with GEOHOOK_ERR_ADMIN_INVALID', async (t) => {
  for (const bad of ['Tools/Buffer', 'Buffer', '', 'a/b/c.GPServer', 'Buffer.json', '/Buffer.GPServer']) {
    t.throws(
      () => parseServiceName(bad),
      { code: 'GEOHOOK_ERR_ADMIN_INVALID', statusCode: 400, message: /^service: must be folder\/name\.Type or name\.Type/ },
      bad,
    );
  }
  t.throws(() => parseServiceName('x'), GeohookError);
});

t.test('updateDefinition lives at services/<folder>/<name>/FeatureServer/updateDefinition', async (t) => {
  t.equal(updateDefinitionPath('Hosted/Roads.FeatureServer'), 'services/Hosted/Roads/FeatureServer/updateDefinition');
  t.equal(updateDefinitionPath('Roads.FeatureServer'), 'services/Roads/FeatureServer/updateDefinition');
  t.throws(() => updateDefinitionPath('Tools/Buffer.GPServer'), {
    code: 'GEOHOOK_ERR_ADMIN_INVALID',
    message: /FeatureServer services only/,
  });
});

t.test('an empty webhook id is refused', async (t) => {
  t.throws(() => webhookPath('Buffer.GPServer', ' '), { code: 'GEOHOOK_ERR_ADMIN_INVALID', message: /^id: / });
});
