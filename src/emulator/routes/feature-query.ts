import type { FastifyInstance } from 'fastify';
import { serviceRoute, type ServiceParams } from '../context.js';
import type { Row } from '../features/change-log.js';
import { bigIntMarks, stringifyExact } from '../features/exact-json.js';
import { project, normalizeWkid } from '../features/geometry.js';
import { queryLayer, type QueryAnswer } from '../features/query-layer.js';
import type { LayerDefinition } from '../features/types.js';
import { Params } from '../params.js';
import { addressedLayer, addressedService, type FeatureRoutesContext } from './feature-context.js';

type LayerParams = ServiceParams & { layer: string };

/**
 * A `query` answer's rows in the product's feature set shape. BigInteger values are marked as the attributes are
 * copied, so that the page is written natively.
 */
function featureSetText(answer: Extract<QueryAnswer, { kind: 'rows' }>, definition: LayerDefinition): string {
  const { objectIdField, globalIdField, geometryType, spatialReference } = definition;
  const own = spatialReference === undefined ? undefined : normalizeWkid(spatialReference);
  const outSR = answer.outSR ?? own;
  const names = answer.fields.map((field) => field.name);
  const marks = bigIntMarks();
  const attributesOf = (row: Row): Record<string, unknown> => {
    const attributes: Record<string, unknown> = {};
    for (const name of names) attributes[name] = marks.mark(row.attributes[name] ?? null);
    return attributes;
  };
  const body = {
    objectIdFieldName: objectIdField,
    globalIdFieldName: globalIdField,
    ...(geometryType === undefined
      ? {}
      : { geometryType, spatialReference: outSR === own ? spatialReference : { wkid: outSR, latestWkid: outSR } }),
    fields: answer.fields,
    features: answer.rows.map((row) => ({
      attributes: attributesOf(row),
      ...(answer.returnGeometry && row.geometry !== null
        ? { geometry: own === undefined || outSR === undefined ? row.geometry : project(row.geometry, own, outSR, 'outSR') }
        : {}),
    })),
    ...(answer.exceededTransferLimit ? { exceededTransferLimit: true } : {}),
  };
  // A field's default value may be a bigint too: stringifyExact writes it (natively when there is none).
  return marks.unmark(stringifyExact(body));
}

/** A layer's `query` (see {@link queryLayer}), answered in the product's feature set shape, BigInteger values exact. */
export async function featureQueryRoutes(app: FastifyInstance, context: FeatureRoutesContext): Promise<void> {
  serviceRoute<LayerParams>(
    app,
    ['GET', 'POST'],
    '/FeatureServer/:layer/query',
    async (request, reply) => {
      const { features } = addressedService(context, request);
      const layer = addressedLayer(features, request.params.layer);
      const answer = queryLayer(Params.of(request), layer);
      const text =
        answer.kind === 'count'
          ? stringifyExact({ count: answer.count })
          : answer.kind === 'ids'
            ? stringifyExact({ objectIdFieldName: layer.definition.objectIdField, objectIds: answer.objectIds })
            : featureSetText(answer, layer.definition);
      return reply.code(200).type('application/json; charset=utf-8').send(text);
    },
    '',
  );
}
