/** The feature-service triggers a delivery can report (every `changeTypes` value but `*`). */
export const featureChangeTypes = [
  'FeaturesCreated',
  'FeaturesUpdated',
  'FeaturesDeleted',
  'FeaturesEdited',
  'AttachmentsCreated',
  'AttachmentsUpdated',
  'AttachmentsDeleted',
  'LayerSchemaChanged',
  'LayerDefinitionChanged',
  'FeatureServiceDefinitionChanged',
] as const;

export type FeatureChangeType = (typeof featureChangeTypes)[number];

/** Every `changeTypes` value a webhook takes: the triggers, and `*` for all of them. */
export const changeTypeValues: readonly string[] = ['*', ...featureChangeTypes];
