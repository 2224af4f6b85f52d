/** The triggers `FeaturesEdited` stands for, lower-cased (itself included). */
const editTriggers = new Set(['featurescreated', 'featuresupdated', 'featuresdeleted', 'featuresedited']);

/**
 * True when a webhook with these `changeTypes` fires for `changeType`: `*` matches every change,
 * `FeaturesEdited` matches features created, updated and deleted (and itself), anything else matches
 * itself, ignoring case.
 */
export function matchesChangeType(webhookChangeTypes: readonly string[], changeType: string): boolean {
  const wanted = changeType.toLowerCase();
  return webhookChangeTypes.some((trigger) => {
    const name = trigger.trim().toLowerCase();
    return name === '*' || name === wanted || (name === 'featuresedited' && editTriggers.has(wanted));
  });
}
