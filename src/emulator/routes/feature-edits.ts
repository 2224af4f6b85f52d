import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { invalidParameter } from '../admin-error.js';
import { serviceRoute, type ServiceParams } from '../context.js';
import { applyFeatureEdits } from '../edit-features.js';
import type { LayerEditResults, LayerEdits } from '../features/apply-edits.js';
import { parseExactJson, stringifyExact } from '../features/exact-json.js';
import { compileWhere } from '../features/where.js';
import { Params } from '../params.js';
import { addressedLayer, addressedService, requestUser, type FeatureRoutesContext } from './feature-context.js';

type LayerParams = ServiceParams & { layer: string };

/** Edits may carry attachments' bytes in base64 (`attachments` with `useGlobalIds`): up to 64 MB a request. */
const EDITS_BODY_LIMIT = { bodyLimit: 64 * 1024 * 1024 };

/** A JSON parameter read exactly (BigInteger values beyond 2^53 keep every digit); undefined when absent. */
function exactJson(params: Params, name: string): unknown {
  if (!params.has(name)) return undefined;
  try {
    return parseExactJson(params.string(name)!);
  } catch {
    throw invalidParameter(name, 'must be valid JSON');
  }
}

/** `deletes` / `objectIds`: a JSON array or a comma-separated list. */
function idList(params: Params, name: string): unknown {
  const text = params.string(name)?.trim();
  if (text === undefined || text === '') return undefined;
  return text.startsWith('[') ? exactJson(params, name) : text.split(',');
}

/** Answers an edit result exactly (BigInteger values unrounded). */
const sendExact = (reply: FastifyReply, body: unknown): FastifyReply =>
  reply.code(200).type('application/json; charset=utf-8').send(stringifyExact(body));

/**
 * Editing as real clients do it: a layer's `applyEdits`, `addFeatures`, `updateFeatures` and `deleteFeatures`,
 * and the service's `applyEdits` (`edits=[{id, adds, updates, deletes}]`), each answered in the product's result
 * shapes. One call is one server generation and fires the service's webhooks once.
 */
export async function featureEditRoutes(app: FastifyInstance, context: FeatureRoutesContext): Promise<void> {
  const apply = (request: FastifyRequest<{ Params: ServiceParams }>, edits: LayerEdits[]): LayerEditResults[] => {
    const params = Params.of(request);
    const { service } = addressedService(context, request);
    const options = {
      useGlobalIds: params.boolean('useGlobalIds') ?? false,
      rollbackOnFailure: params.boolean('rollbackOnFailure') ?? true,
      user: requestUser(context, request).username,
    };
    return applyFeatureEdits(context, service, edits, options).results;
  };

  const layerRoute = (
    operation: string,
    handler: (request: FastifyRequest<{ Params: LayerParams }>, reply: FastifyReply) => Promise<unknown>,
  ): void => serviceRoute<LayerParams>(app, 'POST', `/FeatureServer/:layer/${operation}`, handler, '', EDITS_BODY_LIMIT);

  /** One layer's edits read from the request: `adds`, `updates`, `deletes` (or, for the shortcuts, `features` / `objectIds`). */
  const layerEdits = (
    request: FastifyRequest<{ Params: LayerParams }>,
    names: Partial<Record<'adds' | 'updates' | 'deletes', string>>,
  ): LayerEdits => {
    const params = Params.of(request);
    const { features } = addressedService(context, request);
    const layer = addressedLayer(features, request.params.layer);
    return {
      id: layer.id,
      ...(names.adds === undefined ? {} : { adds: exactJson(params, names.adds) }),
      ...(names.updates === undefined ? {} : { updates: exactJson(params, names.updates) }),
      ...(names.deletes === undefined ? {} : { deletes: idList(params, names.deletes) }),
      ...(names.adds === 'adds' && params.has('attachments') ? { attachments: exactJson(params, 'attachments') } : {}),
    };
  };

  layerRoute('applyEdits', async (request, reply) => {
    const [results] = apply(request, [layerEdits(request, { adds: 'adds', updates: 'updates', deletes: 'deletes' })]);
    const { addResults, updateResults, deleteResults, attachments } = results!;
    return sendExact(reply, { addResults, updateResults, deleteResults, ...(attachments === undefined ? {} : { attachments }) });
  });
  layerRoute('addFeatures', async (request, reply) =>
    sendExact(reply, { addResults: apply(request, [layerEdits(request, { adds: 'features' })])[0]!.addResults }),
  );
  layerRoute('updateFeatures', async (request, reply) =>
    sendExact(reply, { updateResults: apply(request, [layerEdits(request, { updates: 'features' })])[0]!.updateResults }),
  );
  // `objectIds`, or the features a `where` selects.
  layerRoute('deleteFeatures', async (request, reply) => {
    const edits = layerEdits(request, { deletes: 'objectIds' });
    const where = Params.of(request).string('where')?.trim();
    if (edits.deletes === undefined && where !== undefined && where !== '') {
      const layer = addressedLayer(addressedService(context, request).features, request.params.layer);
      const matches = compileWhere(where, layer.definition.fields);
      edits.deletes = [...layer.rows()].filter(([, row]) => matches(row.attributes)).map(([objectId]) => objectId);
    }
    return sendExact(reply, { deleteResults: apply(request, [edits])[0]!.deleteResults });
  });

  serviceRoute<ServiceParams>(
    app,
    'POST',
    '/FeatureServer/applyEdits',
    async (request, reply) => {
      const edits = exactJson(Params.of(request), 'edits');
      if (!Array.isArray(edits) || !edits.every((edit) => Number.isSafeInteger((edit as { id?: unknown } | null)?.id))) {
        throw invalidParameter('edits', 'must be a JSON array such as [{"id":0,"adds":[…],"updates":[…],"deletes":[…]}]');
      }
      return sendExact(reply, apply(request, edits as LayerEdits[]));
    },
    '',
    EDITS_BODY_LIMIT,
  );
}
