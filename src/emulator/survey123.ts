import { randomBytes, randomUUID } from 'node:crypto';
import { invalidParameter } from './admin-error.js';
import type { EmulatorContext } from './context.js';
import { applyFeatureEdits } from './edit-features.js';
import type { LayerEdits } from './features/apply-edits.js';
import { infoOf, sha256Of, type Attachment } from './features/attachments.js';
import { stringifyExact } from './features/exact-json.js';
import type { FeatureLayer } from './features/feature-layer.js';
import { sampleFeature } from './features/sample-features.js';
import type { Feature } from './features/types.js';
import { serviceKey } from './store.js';
import type { CatalogService } from './types.js';

/** A photo of a submission: on the parent, or on the related row `on` (its index). */
interface PhotoInput {
  name?: unknown;
  contentType?: unknown;
  data?: unknown;
  keywords?: unknown;
  on?: unknown;
}

/** What `POST /emulator/services/<name>.FeatureServer/submissions` takes (JSON). */
export interface SubmissionRequest {
  layerId?: unknown;
  attributes?: unknown;
  geometry?: unknown;
  related?: unknown;
  photos?: unknown;
  photoBytes?: unknown;
  user?: unknown;
  webhookUrl?: unknown;
  portalToken?: unknown;
  lose?: unknown;
}

/** A feature a submission made, as the control answer lists it. */
interface Made {
  layerId: number;
  objectId: number;
  globalId: string;
}

const MAX_PHOTO_BYTES = 8 * 1024 * 1024;
const guid = (): string => `{${randomUUID().toUpperCase()}}`;

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** The table related to `parent` as its destination (Survey123's repeat), the first of its relationships. */
function relatedLayerOf(
  layers: readonly FeatureLayer[],
  parent: FeatureLayer,
): { layer: FeatureLayer; keyField: string; parentKey: string } | undefined {
  const origin = parent.definition.relationships.find((relationship) => relationship.role === 'esriRelRoleOrigin');
  const layer = layers.find((candidate) => candidate.id === origin?.relatedTableId);
  const destination = layer?.definition.relationships.find((relationship) => relationship.relatedTableId === parent.id);
  return layer === undefined || destination === undefined
    ? undefined
    : { layer, keyField: destination.keyField, parentKey: origin!.keyField };
}

/** The photos asked for: `n` generated photos (`photoBytes` random bytes each) on the parent, or the list given. */
function photosOf(
  request: SubmissionRequest,
  relatedCount: number,
): { on: number | 'parent'; name: string; contentType: string; keywords: string; data: Buffer }[] {
  const bytes = request.photoBytes ?? 2048;
  if (!Number.isSafeInteger(bytes) || (bytes as number) < 1 || (bytes as number) > MAX_PHOTO_BYTES)
    throw invalidParameter('photoBytes', `must be an integer from 1 to ${MAX_PHOTO_BYTES}`);
  const photos = request.photos ?? 4;
  const list: PhotoInput[] =
    Number.isSafeInteger(photos) && (photos as number) >= 0 && (photos as number) <= 100
      ? Array.from({ length: photos as number }, () => ({}))
      : Array.isArray(photos) && photos.every(isObject)
        ? (photos as PhotoInput[])
        : (() => {
            throw invalidParameter('photos', 'must be a number from 0 to 100 or an array of {"name","contentType","data","keywords","on"}');
          })();
  return list.map((photo, index) => {
    const on = photo.on ?? 'parent';
    if (on !== 'parent' && !(Number.isSafeInteger(on) && (on as number) >= 0 && (on as number) < relatedCount))
      throw invalidParameter(`photos[${index}].on`, `must be "parent" or the index of a related row (0 to ${relatedCount - 1})`);
    if (photo.data !== undefined && typeof photo.data !== 'string') throw invalidParameter(`photos[${index}].data`, 'must be base64');
    return {
      on: on as number | 'parent',
      name: typeof photo.name === 'string' ? photo.name : `photo-${index + 1}.jpg`,
      contentType: typeof photo.contentType === 'string' ? photo.contentType : 'image/jpeg',
      keywords: typeof photo.keywords === 'string' ? photo.keywords : 'photos',
      data: typeof photo.data === 'string' ? Buffer.from(photo.data, 'base64') : randomBytes(bytes as number),
    };
  });
}

/** The related rows asked for: `n` sample rows (default 2), or the attributes given. */
function relatedOf(request: SubmissionRequest, layer: FeatureLayer | undefined): Feature[] {
  const related = request.related ?? (layer === undefined ? 0 : 2);
  if (layer === undefined) {
    if (related === 0 || (Array.isArray(related) && related.length === 0)) return [];
    throw invalidParameter('related', 'the layer has no related table');
  }
  if (Number.isSafeInteger(related) && (related as number) >= 0 && (related as number) <= 100)
    return Array.from({ length: related as number }, (_, index) => sampleFeature(layer.definition, layer.count + index + 1));
  if (Array.isArray(related) && related.every(isObject))
    return related.map((row) => ({ attributes: (row.attributes ?? {}) as Feature['attributes'] }));
  throw invalidParameter('related', 'must be a number from 0 to 100 or an array of {"attributes":{…}}');
}

/**
 * Submits one inspection the way Survey123 does: the parent feature, its related rows (the layer's first related
 * table, keyed to the parent) and photos as attachments, all in one `applyEdits` with `useGlobalIds` (one server
 * generation, the service's webhooks fired once); then, with `webhookUrl`, the Survey123 webhook payload POSTed
 * there. Returns what was made, with each photo's SHA-256.
 */
export async function submitInspection(
  context: EmulatorContext & { publicUrl: () => string },
  service: CatalogService,
  request: SubmissionRequest,
): Promise<Record<string, unknown>> {
  const features = context.store.features.of(serviceKey(service), service);
  const layerId = request.layerId ?? 0;
  const parent = Number.isSafeInteger(layerId) ? features.layer(layerId as number) : undefined;
  if (parent === undefined) throw invalidParameter('layerId', `must be a layer of ${service.serviceName}`);
  const { user = 'admin', lose = false, webhookUrl } = request;
  if (typeof user !== 'string' || user === '') throw invalidParameter('user', 'must be a user name');
  if (typeof lose !== 'boolean') throw invalidParameter('lose', 'must be true or false');
  if (webhookUrl !== undefined && (typeof webhookUrl !== 'string' || !/^https?:\/\//.test(webhookUrl)))
    throw invalidParameter('webhookUrl', 'must be an http(s) URL');
  const relation = relatedLayerOf(features.layers, parent);
  const relatedRows = relatedOf(request, relation?.layer);
  const photos = photosOf(request, relatedRows.length);

  const given = isObject(request.attributes) ? request.attributes : undefined;
  const sample = sampleFeature(parent.definition, parent.count + 1);
  const parentGlobalId = guid();
  const parentFeature = {
    attributes: { ...(given ?? sample.attributes), [parent.definition.globalIdField]: parentGlobalId },
    ...(request.geometry !== undefined
      ? { geometry: request.geometry }
      : sample.geometry === undefined
        ? {}
        : { geometry: sample.geometry }),
  };
  const parentKey =
    relation === undefined
      ? parentGlobalId
      : relation.parentKey === parent.definition.globalIdField
        ? parentGlobalId
        : parentFeature.attributes[relation.parentKey];
  const relatedFeatures = relatedRows.map((row) => ({
    attributes: { ...row.attributes, [relation!.layer.definition.globalIdField]: guid(), [relation!.keyField]: parentKey },
  }));
  const attachmentAdds = photos.map((photo) => ({
    layerId: photo.on === 'parent' ? parent.id : relation!.layer.id,
    add: {
      globalId: guid(),
      parentGlobalId:
        photo.on === 'parent' ? parentGlobalId : String(relatedFeatures[photo.on]!.attributes[relation!.layer.definition.globalIdField]),
      name: photo.name,
      contentType: photo.contentType,
      keywords: photo.keywords,
      data: photo.data.toString('base64'),
    },
  }));
  const editOf = (layer: FeatureLayer, adds: unknown[]): LayerEdits => {
    const attachments = attachmentAdds.filter((entry) => entry.layerId === layer.id).map((entry) => entry.add);
    return { id: layer.id, adds, ...(attachments.length > 0 ? { attachments: { adds: attachments } } : {}) };
  };
  const edits = [
    editOf(parent, [parentFeature]),
    ...(relation === undefined || relatedFeatures.length === 0 ? [] : [editOf(relation.layer, relatedFeatures)]),
  ];
  const outcome = applyFeatureEdits(context, service, edits, { useGlobalIds: true, rollbackOnFailure: true, user, lose });

  const madeOf = (layer: FeatureLayer, globalId: string): Made => ({
    layerId: layer.id,
    objectId: layer.objectIdOf(globalId) ?? -1,
    globalId,
  });
  const attachments = attachmentAdds
    .map(({ layerId: id, add }) => ({ id, attachment: features.layer(id)!.attachments.byGlobalId(add.globalId) }))
    .filter((entry): entry is { id: number; attachment: Attachment } => entry.attachment !== undefined)
    .map(({ id, attachment }) => ({ layerId: id, ...infoOf(attachment), sha256: sha256Of(attachment.data) }));
  const answer: Record<string, unknown> = {
    serverGen: outcome.serverGen ?? null,
    parent: madeOf(parent, parentGlobalId),
    related: relatedFeatures.map((row) => madeOf(relation!.layer, String(row.attributes[relation!.layer.definition.globalIdField]))),
    attachments,
    results: outcome.results,
    deliveries: outcome.deliveries,
  };
  if (webhookUrl === undefined || outcome.serverGen === undefined) return answer;
  const token = typeof request.portalToken === 'string' ? request.portalToken : (context.tokens.issue(user, 60) ?? '');
  const payload = survey123Payload(
    context.publicUrl(),
    service,
    parent,
    parentGlobalId,
    relation?.layer,
    relatedFeatures,
    edits,
    user,
    token,
  );
  answer.webhook = await postPayload(webhookUrl, payload);
  return answer;
}

/** POSTs a Survey123 webhook payload as the app does (JSON); resolves with the status, or the error when none came. */
async function postPayload(url: string, payload: string): Promise<{ url: string; status?: number; error?: string }> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: payload,
      signal: AbortSignal.timeout(10_000),
    });
    await response.arrayBuffer();
    return { url, status: response.status };
  } catch (err) {
    return { url, error: (err as Error).message };
  }
}

/**
 * The payload a Survey123 webhook POSTs for a new record: `eventType` `addData`, the `applyEdits` the app sent
 * (attachments without their bytes), the `feature` as saved (attributes, geometry, `layerInfo`, `result`, its
 * `attachments` by question and its `repeats` by table), `surveyInfo`, `portalInfo` with the user's token, and
 * `userInfo`.
 */
function survey123Payload(
  publicUrl: string,
  service: CatalogService,
  parent: FeatureLayer,
  parentGlobalId: string,
  relatedLayer: FeatureLayer | undefined,
  relatedFeatures: { attributes: Record<string, unknown> }[],
  edits: LayerEdits[],
  user: string,
  token: string,
): string {
  const serviceUrl = `${publicUrl}/arcgis/rest/services/${service.folderName === undefined ? '' : `${service.folderName}/`}${service.serviceName}/FeatureServer`;
  const layerInfo = (layer: FeatureLayer) => ({
    id: layer.id,
    name: layer.definition.name,
    type: layer.definition.type,
    globalIdField: layer.definition.globalIdField,
    objectIdField: layer.definition.objectIdField,
    relationships: layer.definition.relationships,
  });
  const attachmentsOf = (layer: FeatureLayer, objectId: number) => {
    const byQuestion: Record<string, unknown[]> = {};
    for (const attachment of layer.attachments.of(objectId)) {
      (byQuestion[attachment.keywords] ??= []).push({
        ...infoOf(attachment),
        url: `${serviceUrl}/${layer.id}/${objectId}/attachments/${attachment.id}`,
      });
    }
    return byQuestion;
  };
  const saved = (layer: FeatureLayer, globalId: string) => {
    const objectId = layer.objectIdOf(globalId)!;
    return {
      attributes: layer.row(objectId)!.attributes,
      result: { globalId, objectId, uniqueId: objectId, success: true },
      attachments: attachmentsOf(layer, objectId),
    };
  };
  const { attributes, result, attachments } = saved(parent, parentGlobalId);
  const geometry = parent.row(result.objectId)!.geometry;
  const repeats =
    relatedLayer === undefined
      ? {}
      : {
          [relatedLayer.definition.name]: relatedFeatures.map((row) =>
            saved(relatedLayer, String(row.attributes[relatedLayer.definition.globalIdField])),
          ),
        };
  const withoutBytes = edits.map((edit) => {
    const attachmentAdds = (edit.attachments as { adds?: Record<string, unknown>[] } | undefined)?.adds;
    return attachmentAdds === undefined ? edit : { ...edit, attachments: { adds: attachmentAdds.map(({ data: _data, ...rest }) => rest) } };
  });
  const itemId = randomUUID().replaceAll('-', '');
  return stringifyExact({
    eventType: 'addData',
    applyEdits: withoutBytes,
    feature: {
      attributes,
      geometry: geometry === null ? null : { ...geometry, spatialReference: parent.definition.spatialReference },
      layerInfo: layerInfo(parent),
      result,
      attachments,
      repeats,
    },
    surveyInfo: { formItemId: itemId, formTitle: `${service.serviceName} inspection`, serviceItemId: itemId, serviceUrl },
    portalInfo: { url: `${publicUrl}/arcgis`, token },
    userInfo: { username: user, firstName: user, lastName: '', fullName: user, email: `${user}@example.com` },
  });
}
