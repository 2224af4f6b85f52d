import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AdminError, invalidParameter } from '../admin-error.js';
import { ADMIN, authorize, type EmulatorContext } from '../context.js';
import { sendAdmin } from '../respond.js';

interface DefinitionParams {
  folder?: string;
  name: string;
}

/** Options of {@link updateDefinitionRoutes}. */
export interface UpdateDefinitionOptions extends EmulatorContext {
  /** The answer on success: the admin API's `{"status":"success"}`, or the hosted services' `{"success":true}`. */
  answer: Record<string, unknown>;
}

/**
 * A feature service's `updateDefinition` (capabilities and `syncEnabled`) at `services/[<folder>/]<name>/FeatureServer/updateDefinition`,
 * under the admin root and under `rest/admin`, where arcgis-rest-js's `updateServiceDefinition` posts.
 */
export async function updateDefinitionRoutes(app: FastifyInstance, options: UpdateDefinitionOptions): Promise<void> {
  for (const url of ['/services/:name/FeatureServer/updateDefinition', '/services/:folder/:name/FeatureServer/updateDefinition']) {
    app.post<{ Params: DefinitionParams }>(url, updateDefinition);
  }

  async function updateDefinition(request: FastifyRequest<{ Params: DefinitionParams }>, reply: FastifyReply): Promise<FastifyReply> {
    const { params } = authorize(options, request, ADMIN, 'updateDefinition');
    const service = options.store.service(request.params.folder, `${request.params.name}.FeatureServer`);
    const definition = params.json('updateDefinition');
    if (definition === undefined) throw new AdminError(400, "Missing required parameter 'updateDefinition'.");
    if (typeof definition !== 'object' || definition === null || Array.isArray(definition)) {
      throw invalidParameter(
        'updateDefinition',
        'must be a JSON object such as {"capabilities":"Query,Editing,ChangeTracking","syncEnabled":false}',
      );
    }
    const { capabilities, syncEnabled } = definition as { capabilities?: unknown; syncEnabled?: unknown };
    if (capabilities !== undefined && typeof capabilities !== 'string')
      throw invalidParameter('updateDefinition.capabilities', 'must be a comma-separated string');
    if (syncEnabled !== undefined && typeof syncEnabled !== 'boolean')
      throw invalidParameter('updateDefinition.syncEnabled', 'must be true or false');
    if (capabilities !== undefined) service.capabilities = capabilities;
    if (syncEnabled !== undefined) service.syncEnabled = syncEnabled;
    return sendAdmin(request, reply, options.answer);
  }
}
