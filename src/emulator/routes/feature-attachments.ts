import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AdminError, invalidParameter } from '../admin-error.js';
import { serviceRoute, type ServiceParams } from '../context.js';
import { applyFeatureEdits } from '../edit-features.js';
import { MAX_ATTACHMENT_BYTES, type AttachmentResult } from '../features/attachment-edits.js';
import { infoOf, type Attachment } from '../features/attachments.js';
import type { FeatureLayer } from '../features/feature-layer.js';
import { compileWhere } from '../features/where.js';
import { parseMultipart, type UploadedFile } from '../multipart.js';
import { Params } from '../params.js';
import { sendAdmin } from '../respond.js';
import { addressedLayer, addressedService, requestUser, type FeatureRoutesContext } from './feature-context.js';

type LayerParams = ServiceParams & { layer: string };
type FeatureParams = LayerParams & { feature: string };
type AttachmentParams = FeatureParams & { attachmentId: string };

/** The URL of an attachment's bytes under a feature service's URL (`…/FeatureServer`). */
export const attachmentUrl = (serviceUrl: string, layerId: number, attachment: Attachment): string =>
  `${serviceUrl}/${layerId}/${attachment.parentObjectId}/attachments/${attachment.id}`;

/** The request's URL path (no query), up to and including `/FeatureServer`. */
const serviceUrlOf = (context: FeatureRoutesContext, request: FastifyRequest): string => {
  const path = request.url.split('?')[0]!;
  return `${context.publicUrl()}${path.slice(0, path.indexOf('/FeatureServer') + '/FeatureServer'.length)}`;
};

const NOT_SUPPORTED = 'Requested operation is not supported by this service.';

/** The items of a list given, as a set; undefined when not given. */
const optionalSet = <T>(items: readonly T[] | undefined): Set<T> | undefined => (items === undefined ? undefined : new Set(items));

/**
 * Attachments as the product serves them, on layers with `hasAttachments`: a feature's attachment infos
 * (`…/<layer>/<oid>/attachments`), an attachment's bytes (`…/attachments/<id>`, with its content type),
 * `addAttachment` and `updateAttachment` (multipart `attachment`), `deleteAttachments` (`attachmentIds`) and the
 * layer's `queryAttachments` (paged over attachments by `resultOffset` and `resultRecordCount` within the layer's
 * `maxRecordCount`, `exceededTransferLimit` when more remain). Each edit is one server generation and fires the service's webhooks
 * (`AttachmentsCreated`, `AttachmentsUpdated`, `AttachmentsDeleted`).
 */
export async function featureAttachmentRoutes(app: FastifyInstance, context: FeatureRoutesContext): Promise<void> {
  app.addContentTypeParser(
    'multipart/form-data',
    { parseAs: 'buffer', bodyLimit: MAX_ATTACHMENT_BYTES + 1_048_576 },
    (request, body, done) => {
      try {
        done(null, parseMultipart(body as Buffer, String(request.headers['content-type'])));
      } catch (err) {
        done(err as Error, undefined);
      }
    },
  );

  const route = <P extends ServiceParams>(
    method: 'GET' | 'POST' | ('GET' | 'POST')[],
    tail: string,
    handler: (request: FastifyRequest<{ Params: P }>, reply: FastifyReply) => Promise<unknown>,
  ): void => serviceRoute<P>(app, method, `/FeatureServer${tail}`, handler, '');

  /** The layer of the request, which must take attachments. */
  const layerOf = (request: FastifyRequest<{ Params: LayerParams }>): FeatureLayer => {
    const layer = addressedLayer(addressedService(context, request).features, request.params.layer);
    if (layer.definition.hasAttachments !== true) throw new AdminError(400, NOT_SUPPORTED, `Layer ${layer.id} has no attachments.`);
    return layer;
  };

  /** The feature of the request (`<oid>`), with its GlobalID. */
  const featureOf = (request: FastifyRequest<{ Params: FeatureParams }>): { layer: FeatureLayer; objectId: number; globalId: string } => {
    const layer = layerOf(request);
    const objectId = /^\d{1,15}$/.test(request.params.feature) ? Number(request.params.feature) : undefined;
    const row = objectId === undefined ? undefined : layer.row(objectId);
    if (row === undefined) throw new AdminError(404, 'Feature not found.', `No feature ${request.params.feature} in layer ${layer.id}.`);
    return { layer, objectId: objectId!, globalId: String(row.attributes[layer.definition.globalIdField]) };
  };

  /** Applies one layer's attachment edits as one `applyEdits` call would; returns the attachment results. */
  const editAttachments = (
    request: FastifyRequest<{ Params: FeatureParams }>,
    layer: FeatureLayer,
    attachments: { adds?: unknown[]; updates?: unknown[]; deletes?: unknown[] },
  ): { addResults: AttachmentResult[]; updateResults: AttachmentResult[]; deleteResults: AttachmentResult[] } => {
    const { service } = addressedService(context, request);
    const options = { useGlobalIds: true, rollbackOnFailure: false, user: requestUser(context, request).username };
    const [results] = applyFeatureEdits(context, service, [{ id: layer.id, attachments }], options).results;
    return results!.attachments!;
  };

  /** The uploaded file of `addAttachment` / `updateAttachment`. */
  const uploadOf = (request: FastifyRequest): UploadedFile => {
    const file = (request.body as Record<string, unknown> | null)?.attachment;
    if (file === null || typeof file !== 'object' || !Buffer.isBuffer((file as UploadedFile).data))
      throw new AdminError(400, 'Unable to complete operation.', "Send the file as the multipart part 'attachment'.");
    return file as UploadedFile;
  };

  route<FeatureParams>(['GET', 'POST'], '/:layer/:feature/attachments', async (request, reply) => {
    const { layer, objectId } = featureOf(request);
    return sendAdmin(request, reply, { attachmentInfos: layer.attachments.of(objectId).map(infoOf) });
  });

  route<AttachmentParams>(['GET', 'POST'], '/:layer/:feature/attachments/:attachmentId', async (request, reply) => {
    const { layer, objectId } = featureOf(request);
    const attachment = /^\d{1,15}$/.test(request.params.attachmentId)
      ? layer.attachments.get(Number(request.params.attachmentId))
      : undefined;
    if (attachment === undefined || attachment.parentObjectId !== objectId)
      throw new AdminError(404, 'Attachment not found.', `No attachment ${request.params.attachmentId} of feature ${objectId}.`);
    return reply
      .code(200)
      .type(attachment.contentType)
      .header('content-disposition', `inline; filename*=UTF-8''${encodeURIComponent(attachment.name)}`)
      .send(attachment.data);
  });

  route<FeatureParams>('POST', '/:layer/:feature/addAttachment', async (request, reply) => {
    const { layer, globalId } = featureOf(request);
    const file = uploadOf(request);
    const keywords = Params.of(request).string('keywords');
    const add = {
      globalId: `{${randomUUID().toUpperCase()}}`,
      parentGlobalId: globalId,
      name: file.filename,
      contentType: file.contentType,
      data: file.data,
      ...(keywords === undefined ? {} : { keywords }),
    };
    const [result] = editAttachments(request, layer, { adds: [add] }).addResults;
    return sendAdmin(request, reply, { addAttachmentResult: result });
  });

  route<FeatureParams>('POST', '/:layer/:feature/updateAttachment', async (request, reply) => {
    const { layer, objectId } = featureOf(request);
    const params = Params.of(request);
    const id = params.integer('attachmentId', 1, Number.MAX_SAFE_INTEGER);
    const attachment = id === undefined ? undefined : layer.attachments.get(id);
    if (attachment === undefined || attachment.parentObjectId !== objectId) {
      const error = { code: 1011, description: 'Object is missing.' };
      return sendAdmin(request, reply, { updateAttachmentResult: { objectId: id ?? -1, globalId: null, success: false, error } });
    }
    const file = uploadOf(request);
    const keywords = params.string('keywords');
    const update = {
      globalId: attachment.globalId,
      name: file.filename,
      contentType: file.contentType,
      data: file.data,
      ...(keywords === undefined ? {} : { keywords }),
    };
    const [result] = editAttachments(request, layer, { updates: [update] }).updateResults;
    return sendAdmin(request, reply, { updateAttachmentResult: result });
  });

  route<FeatureParams>('POST', '/:layer/:feature/deleteAttachments', async (request, reply) => {
    const { layer, objectId } = featureOf(request);
    const ids = (Params.of(request).string('attachmentIds') ?? '')
      .split(',')
      .map((id) => id.trim())
      .filter((id) => id !== '');
    if (ids.length === 0) throw new AdminError(400, "Missing required parameter 'attachmentIds'.");
    const found = ids
      .map((id) => (/^\d{1,15}$/.test(id) ? layer.attachments.get(Number(id)) : undefined))
      .map((a) => (a?.parentObjectId === objectId ? a : undefined));
    const known = found.filter((attachment): attachment is Attachment => attachment !== undefined);
    const results =
      known.length === 0 ? [] : editAttachments(request, layer, { deletes: known.map(({ globalId }) => globalId) }).deleteResults;
    const deleteAttachmentResults = found.map((attachment, index) =>
      attachment === undefined
        ? { objectId: Number(ids[index]) || -1, globalId: null, success: false, error: { code: 1011, description: 'Object is missing.' } }
        : results[known.indexOf(attachment)],
    );
    return sendAdmin(request, reply, { deleteAttachmentResults });
  });

  route<LayerParams>(['GET', 'POST'], '/:layer/queryAttachments', async (request, reply) => {
    const layer = layerOf(request);
    const params = Params.of(request);
    const list = (name: string): string[] | undefined =>
      params.has(name)
        ? params
            .string(name)!
            .split(',')
            .map((item) => item.trim())
            .filter((item) => item !== '')
        : undefined;
    const objectIds = optionalSet(list('objectIds')?.map(Number));
    const globalIds = optionalSet(list('globalIds')?.map((id) => id.toUpperCase().replace(/^\{?(.*?)\}?$/, '{$1}')));
    const where = params.string('definitionExpression')?.trim();
    if (objectIds === undefined && globalIds === undefined && (where === undefined || where === ''))
      throw invalidParameter('objectIds', "give one of 'objectIds', 'globalIds' and 'definitionExpression'");
    const matches = where === undefined || where === '' ? undefined : compileWhere(where, layer.definition.fields);
    const types = list('attachmentTypes')?.map((type) => type.toLowerCase());
    const keywords = list('keywords');
    const returnUrl = params.boolean('returnUrl') ?? false;
    const { maxRecordCount } = layer.definition;
    const offset = params.integer('resultOffset', 0, Number.MAX_SAFE_INTEGER) ?? 0;
    const count = Math.min(params.integer('resultRecordCount', 1, Number.MAX_SAFE_INTEGER) ?? maxRecordCount, maxRecordCount);
    const serviceUrl = serviceUrlOf(context, request);
    let skipped = 0;
    let exceededTransferLimit = false;
    const groups = [];
    for (const [objectId, row] of layer.rows()) {
      const parentGlobalId = String(row.attributes[layer.definition.globalIdField]);
      if (objectIds !== undefined && !objectIds.has(objectId)) continue;
      if (globalIds !== undefined && !globalIds.has(parentGlobalId)) continue;
      if (matches !== undefined && !matches(row.attributes)) continue;
      const attachmentInfos = layer.attachments
        .of(objectId)
        .filter(
          ({ contentType }) => types === undefined || types.some((type) => contentType.toLowerCase().startsWith(type.replace(/\*$/, ''))),
        )
        .filter((attachment) => keywords === undefined || keywords.includes(attachment.keywords))
        .map((attachment) => ({ ...infoOf(attachment), ...(returnUrl ? { url: attachmentUrl(serviceUrl, layer.id, attachment) } : {}) }));
      // A page counts attachments, not features: `resultOffset` skips them, a group may be cut at either end.
      const from = Math.min(attachmentInfos.length, offset - skipped);
      skipped += from;
      const room = count - groups.reduce((sum, group) => sum + group.attachmentInfos.length, 0);
      const page = attachmentInfos.slice(from, from + room);
      if (from + page.length < attachmentInfos.length) exceededTransferLimit = true;
      if (page.length > 0) groups.push({ parentObjectId: objectId, parentGlobalId, attachmentInfos: page });
      if (exceededTransferLimit) break;
    }
    return sendAdmin(request, reply, { attachmentGroups: groups, ...(exceededTransferLimit ? { exceededTransferLimit: true } : {}) });
  });
}
