import t from 'tap';
import { matchesChangeType } from '../../src/emulator/delivery/delivery-engine.js';

t.test('matchesChangeType: * matches all, FeaturesEdited matches created/updated/deleted, else exact ignoring case', async (t) => {
  t.equal(matchesChangeType(['*'], 'LayerSchemaChanged'), true);
  for (const type of ['FeaturesCreated', 'featuresupdated', 'FeaturesDeleted', 'FeaturesEdited']) {
    t.equal(matchesChangeType(['FeaturesEdited'], type), true, type);
  }
  t.equal(matchesChangeType(['FeaturesEdited'], 'AttachmentsCreated'), false);
  t.equal(matchesChangeType(['FeaturesCreated'], 'FeaturesEdited'), false, 'a narrower trigger does not match the wider event');
  t.equal(matchesChangeType(['featurescreated'], 'FeaturesCreated'), true);
  t.equal(matchesChangeType(['FeaturesCreated', 'AttachmentsDeleted'], 'AttachmentsDeleted'), true);
  t.equal(matchesChangeType(['FeaturesCreated'], 'FeaturesUpdated'), false);
  t.equal(matchesChangeType([], 'FeaturesCreated'), false);
});
