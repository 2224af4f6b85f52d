import type { FastifyInstance } from 'fastify';
import { serviceRoute, type ServiceParams } from '../context.js';
import { stringifyExact } from '../features/exact-json.js';
import { project, normalizeWkid } from '../features/geometry.js';
import { queryLayer } from '../features/query-layer.js';
import { Params } from '../params.js';
import { addressedLayer, addressedService, type FeatureRoutesContext } from './feature-context.js';

type LayerParams = ServiceParams & { layer: string };

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
      const { objectIdField, globalIdField, geometryType, spatialReference } = layer.definition;
      let body: unknown;
      if (answer.kind === 'count') body = { count: answer.count };
      else if (answer.kind === 'ids') body = { objectIdFieldName: objectIdField, objectIds: answer.objectIds };
      else {
        const own = spatialReference === undefined ? undefined : normalizeWkid(spatialReference);
        const outSR = answer.outSR ?? own;
        const names = answer.fields.map((field) => field.name);
        body = {
          objectIdFieldName: objectIdField,
          globalIdFieldName: globalIdField,
          ...(geometryType === undefined
            ? {}
            : { geometryType, spatialReference: outSR === own ? spatialReference : { wkid: outSR, latestWkid: outSR } }),
          fields: answer.fields,
          features: answer.rows.map((row) => ({
            attributes: Object.fromEntries(names.map((name) => [name, row.attributes[name] ?? null])),
            ...(answer.returnGeometry && row.geometry !== null
              ? { geometry: own === undefined || outSR === undefined ? row.geometry : project(row.geometry, own, outSR, 'outSR') }
              : {}),
          })),
          ...(answer.exceededTransferLimit ? { exceededTransferLimit: true } : {}),
        };
      }
      return reply.code(200).type('application/json; charset=utf-8').send(stringifyExact(body));
    },
    '',
  );
}
