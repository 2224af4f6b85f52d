import type { FastifyInstance } from 'fastify';
import { jsonNestingExceeds, MAX_NESTING } from '../../arcgis/payload.js';
import { validatePlacementPolicy } from '../../arcgis/placement-policy.js';
import { AdminError, invalidParameter } from '../admin-error.js';
import { ADMIN, authorize, serviceRoute, type EmulatorContext, type ServiceParams } from '../context.js';
import { sendAdmin } from '../respond.js';
import { serviceKey } from '../store.js';

/** `placementPolicy/edit` (validated as a whole) and the current policy at `placementPolicy`. */
export async function placementRoutes(app: FastifyInstance, context: EmulatorContext): Promise<void> {
  const { store } = context;

  serviceRoute<ServiceParams>(app, 'POST', '/placementPolicy/edit', async (request, reply) => {
    const { params } = authorize(context, request, ADMIN, 'edit placement policy');
    const service = store.service(request.params.folder, request.params.service);
    params.boolean('async');
    const raw = params.string('servicePlacementPolicy');
    if (raw === undefined || raw.trim() === '') throw new AdminError(400, "Missing required parameter 'servicePlacementPolicy'.");
    // Its nesting is bounded first: the validator renders a wrong value with JSON.stringify, which overflows
    // the stack on arrays nested some thousand levels deep.
    if (jsonNestingExceeds(raw, MAX_NESTING)) {
      throw invalidParameter('servicePlacementPolicy', `must not nest deeper than ${MAX_NESTING} levels`);
    }
    const result = validatePlacementPolicy(raw);
    if (!result.ok) throw new AdminError(400, ...(result.errors as [string, ...string[]]));
    store.placementPolicies.set(serviceKey(service), result.policy);
    return sendAdmin(request, reply, { status: 'success' });
  });

  serviceRoute<ServiceParams>(app, ['GET', 'POST'], '/placementPolicy', async (request, reply) => {
    authorize(context, request, ADMIN, 'placement policy');
    const service = store.service(request.params.folder, request.params.service);
    const policy = store.placementPolicies.get(serviceKey(service)) ?? { placementPolicy: [] };
    return sendAdmin(request, reply, { servicePlacementPolicy: policy });
  });
}
