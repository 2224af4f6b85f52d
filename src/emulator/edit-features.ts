import type { EmulatorContext } from './context.js';
import { matchesChangeType } from './delivery/match-change-type.js';
import { EditBatch, type ApplyEditsOptions, type LayerEditResults, type LayerEdits } from './features/apply-edits.js';
import type { FeatureLayer } from './features/feature-layer.js';
import type { ServiceFeatures } from './features/feature-store.js';
import { serviceKey } from './store.js';
import type { CatalogService } from './types.js';

/** A change of a feature service made at one server generation, as its webhooks report it. */
export interface FeatureServiceChange {
  when: number;
  serverGen: number;
  /** The service's generation before the change: Enterprise's `serverGens[0]`. */
  serviceGenBefore: number;
  /** Each layer touched, its generation before the change (ArcGIS Online's `serverGens[0]`) and the change types made. */
  layers: { id: number; genBefore: number; changeTypes: string[] }[];
}

/** What a feature-service edit answered and fired. */
export interface FeatureEditOutcome {
  /** The generation of the edit; undefined when nothing changed (all failed, or rolled back). */
  serverGen: number | undefined;
  results: LayerEditResults[];
  /** Delivery ids, one per webhook fired. */
  deliveries: string[];
  change: FeatureServiceChange | undefined;
}

const changeTypeOf = { add: 'FeaturesCreated', update: 'FeaturesUpdated', delete: 'FeaturesDeleted' } as const;
const attachmentChangeTypeOf = { add: 'AttachmentsCreated', update: 'AttachmentsUpdated', delete: 'AttachmentsDeleted' } as const;

/** The generations of `features` and its layers before a change: where its webhooks' ranges start. */
export function generationsBefore(features: ServiceFeatures, when: number): { serviceGenBefore: number; layerGen: (id: number) => number } {
  return {
    serviceGenBefore: features.serverGen ?? when,
    layerGen: (id) => features.layer(id)?.serverGen ?? when,
  };
}

/**
 * Fires the webhooks of `service` for `change`, once each: its active Enterprise webhooks with the service's range
 * and the change types each asked for, and, for a hosted service, the Online organization's webhooks of the
 * service once per layer touched, with the layer's range. Returns the delivery ids.
 */
export function fireFeatureChange(context: EmulatorContext, service: CatalogService, change: FeatureServiceChange): string[] {
  const { store, engine } = context;
  const made = [...new Set(change.layers.flatMap((layer) => layer.changeTypes))];
  const ids: string[] = [];
  for (const hook of store.webhooksOf(service)) {
    const changeTypes = made.filter((type) => matchesChangeType(hook.changeTypes, type));
    if (!hook.active || changeTypes.length === 0) continue;
    const event = {
      kind: 'feature' as const,
      changeTypes,
      layerId: change.layers[0]!.id,
      serverGens: [change.serviceGenBefore, change.serverGen] as const,
    };
    ids.push(...engine.fire([hook], event, change.when).map(({ id }) => id));
  }
  if (service.hosted !== true) return ids;
  for (const hook of store.onlineWebhooks.values()) {
    if (hook.serviceName !== service.serviceName) continue;
    for (const layer of change.layers) {
      const changeTypes = layer.changeTypes.filter((type) => matchesChangeType(hook.changeTypes, type));
      if (changeTypes.length === 0) continue;
      const event = { kind: 'feature' as const, changeTypes, layerId: layer.id, serverGens: [layer.genBefore, change.serverGen] as const };
      ids.push(...engine.fireOnline([hook], event, change.when).map(({ id }) => id));
    }
  }
  return ids;
}

/**
 * Applies one `applyEdits` call to `service` (see {@link EditBatch}) at one new server generation, and fires its
 * webhooks once with the change types it made, unless `lose` (the edit is kept, as a server that failed to deliver
 * it would have it).
 */
export function applyFeatureEdits(
  context: EmulatorContext,
  service: CatalogService,
  edits: readonly LayerEdits[],
  options: ApplyEditsOptions & { lose?: boolean },
): FeatureEditOutcome {
  const features = context.store.features.of(serviceKey(service), service);
  const batch = new EditBatch((id) => features.layer(id), options);
  for (const layerEdits of edits) batch.plan(layerEdits);
  if (batch.changes.length === 0 && batch.attachmentChanges.length === 0)
    return { serverGen: undefined, results: batch.commit(undefined, 0), deliveries: [], change: undefined };
  const { when, serverGen } = context.store.features.nextGeneration(context.clock.now());
  const before = generationsBefore(features, when);
  const touched = new Map<number, Set<string>>();
  const touch = (layerId: number, changeType: string): void => {
    if (!touched.has(layerId)) touched.set(layerId, new Set());
    touched.get(layerId)!.add(changeType);
  };
  for (const { layer, op, objectId } of batch.changes) {
    touch(layer.id, changeTypeOf[op]);
    if (op === 'delete' && layer.attachments.of(objectId).length > 0) touch(layer.id, attachmentChangeTypeOf.delete);
  }
  for (const { layer, op } of batch.attachmentChanges) touch(layer.id, attachmentChangeTypeOf[op]);
  const change: FeatureServiceChange = {
    when,
    serverGen,
    serviceGenBefore: before.serviceGenBefore,
    layers: [...touched].map(([id, types]) => ({ id, genBefore: before.layerGen(id), changeTypes: [...types] })),
  };
  const results = batch.commit(serverGen, when);
  return { serverGen, results, deliveries: options.lose === true ? [] : fireFeatureChange(context, service, change), change };
}

/**
 * Records a change of `service` that touches no feature (a definition, attachments) at a new server generation:
 * `layers` makes it (it is given the generation) and returns the layers it touched, each marked changed; the
 * webhooks fire `changeType` for them unless `lose`.
 */
export function recordServiceChange(
  context: EmulatorContext,
  service: CatalogService,
  changeType: string,
  layers: (serverGen: number) => readonly FeatureLayer[],
  lose = false,
): { change: FeatureServiceChange; deliveries: string[] } {
  const features = context.store.features.of(serviceKey(service), service);
  const { when, serverGen } = context.store.features.nextGeneration(context.clock.now());
  const before = generationsBefore(features, when);
  const touched = layers(serverGen).map((layer) => ({ id: layer.id, genBefore: before.layerGen(layer.id), changeTypes: [changeType] }));
  for (const { id } of touched) features.layer(id)!.touch(serverGen);
  const change = { when, serverGen, serviceGenBefore: before.serviceGenBefore, layers: touched };
  return { change, deliveries: lose ? [] : fireFeatureChange(context, service, change) };
}
