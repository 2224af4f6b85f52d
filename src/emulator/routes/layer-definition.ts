import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { AdminError, invalidParameter } from '../admin-error.js';
import { ADMIN, authorize, type EmulatorContext } from '../context.js';
import { recordServiceChange } from '../edit-features.js';
import { fieldSchema, layerSchema } from '../features/definition-schema.js';
import type { FeatureLayer } from '../features/feature-layer.js';
import type { Params } from '../params.js';
import { sendAdmin } from '../respond.js';
import { serviceKey } from '../store.js';
import type { CatalogService } from '../types.js';

interface DefinitionParams {
  folder?: string;
  name: string;
  layer?: string;
}

/** Options of {@link layerDefinitionRoutes}. */
export interface LayerDefinitionOptions extends EmulatorContext {
  /** The answer on success: the admin API's `{"status":"success"}`, or the hosted services' `{"success":true}`. */
  answer: Record<string, unknown>;
}

const fieldsDefinition = z.object({ fields: z.array(fieldSchema).min(1) }).strip();
const namesDefinition = z.object({ fields: z.array(z.object({ name: z.string().min(1) }).strip()).min(1) }).strip();
const layersDefinition = z.object({ layers: z.array(layerSchema).min(1) }).strip();

/** The JSON parameter `name`, checked by `schema`; a 400 naming the first problem otherwise. */
function definitionOf<T>(params: Params, name: string, schema: z.ZodType<T>): T {
  const parsed = schema.safeParse(params.json(name) ?? null);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw invalidParameter(name, `${issue.path.length > 0 ? `at ${issue.path.join('.')}: ` : ''}${issue.message}`);
}

/**
 * Schema changes through the admin operations of hosted feature services: a layer's `addToDefinition` and
 * `deleteFromDefinition` (`{"fields":[…]}`) firing `LayerSchemaChanged`, and the service's `addToDefinition`
 * (`{"layers":[…]}`) firing `FeatureServiceDefinitionChanged`. Each is one server generation. Features keep
 * their values; an added field is null on them, a deleted one is gone from them (rows already in the change log
 * keep what they had).
 */
export async function layerDefinitionRoutes(app: FastifyInstance, options: LayerDefinitionOptions): Promise<void> {
  const serviceOf = (request: FastifyRequest<{ Params: DefinitionParams }>): CatalogService =>
    options.store.service(request.params.folder, `${request.params.name}.FeatureServer`);

  const change = (service: CatalogService, changeType: string, layers: () => FeatureLayer[]): void => {
    recordServiceChange(options, service, changeType, layers);
  };

  const layerOf = (service: CatalogService, id: string | undefined): FeatureLayer => {
    const layer = /^\d{1,9}$/.test(id ?? '') ? options.store.features.of(serviceKey(service), service).layer(Number(id)) : undefined;
    if (layer === undefined) throw new AdminError(404, `Layer ${id} does not exist in ${service.serviceName}.`);
    return layer;
  };

  async function addFields(request: FastifyRequest<{ Params: DefinitionParams }>, reply: FastifyReply): Promise<FastifyReply> {
    const { params } = authorize(options, request, ADMIN, 'addToDefinition');
    const service = serviceOf(request);
    const layer = layerOf(service, request.params.layer);
    const { fields } = definitionOf(params, 'addToDefinition', fieldsDefinition);
    for (const added of fields) {
      if (layer.definition.fields.some((existing) => existing.name.toLowerCase() === added.name.toLowerCase())) {
        throw new AdminError(400, `Field '${added.name}' already exists in layer ${layer.id}.`);
      }
    }
    change(service, 'LayerSchemaChanged', () => [layer.addFields(fields)]);
    return sendAdmin(request, reply, options.answer);
  }

  async function deleteFields(request: FastifyRequest<{ Params: DefinitionParams }>, reply: FastifyReply): Promise<FastifyReply> {
    const { params } = authorize(options, request, ADMIN, 'deleteFromDefinition');
    const service = serviceOf(request);
    const layer = layerOf(service, request.params.layer);
    const { fields } = definitionOf(params, 'deleteFromDefinition', namesDefinition);
    const { objectIdField, globalIdField } = layer.definition;
    const names = fields.map(({ name }) => {
      const found = layer.definition.fields.find((existing) => existing.name.toLowerCase() === name.toLowerCase());
      if (found === undefined) throw new AdminError(400, `Field '${name}' does not exist in layer ${layer.id}.`);
      if (found.name === objectIdField || found.name === globalIdField)
        throw new AdminError(400, `Field '${found.name}' cannot be deleted.`);
      return found.name;
    });
    change(service, 'LayerSchemaChanged', () => [layer.deleteFields(names)]);
    return sendAdmin(request, reply, options.answer);
  }

  async function addLayers(request: FastifyRequest<{ Params: DefinitionParams }>, reply: FastifyReply): Promise<FastifyReply> {
    const { params } = authorize(options, request, ADMIN, 'addToDefinition');
    const service = serviceOf(request);
    const features = options.store.features.of(serviceKey(service), service);
    const { layers } = definitionOf(params, 'addToDefinition', layersDefinition);
    for (const layer of layers)
      if (features.layer(layer.id) !== undefined) throw new AdminError(400, `Layer ${layer.id} already exists in ${service.serviceName}.`);
    change(service, 'FeatureServiceDefinitionChanged', () => layers.map((definition) => features.addLayer(definition)));
    return sendAdmin(request, reply, options.answer);
  }

  for (const base of ['/services/:name/FeatureServer', '/services/:folder/:name/FeatureServer']) {
    app.post<{ Params: DefinitionParams }>(`${base}/:layer/addToDefinition`, addFields);
    app.post<{ Params: DefinitionParams }>(`${base}/:layer/deleteFromDefinition`, deleteFields);
    app.post<{ Params: DefinitionParams }>(`${base}/addToDefinition`, addLayers);
  }
}
