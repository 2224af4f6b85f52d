import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { featureChangeTypes } from '../../arcgis/change-types.js';
import { AdminError, invalidParameter } from '../admin-error.js';
import type { EmulatorClock } from '../clock.js';
import { serviceRoute, type EmulatorContext, type ServiceParams } from '../context.js';
import { formatFailuresByDay } from '../delivery/deactivation-policy.js';
import { applyFeatureEdits, recordServiceChange, type FeatureServiceChange } from '../edit-features.js';
import type { ApplyEditsOptions, LayerEdits } from '../features/apply-edits.js';
import { parseExactJson } from '../features/exact-json.js';
import type { FeatureLayer } from '../features/feature-layer.js';
import { sampleFeature, sampleUpdate } from '../features/sample-features.js';
import { serviceKey } from '../store.js';
import { submitInspection, type SubmissionRequest } from '../survey123.js';
import type { CatalogService } from '../types.js';

type ControlParams = ServiceParams;

const outcomes = ['succeeded', 'failed', 'canceled'] as const;

/** The most features one `bulk` request adds. */
const MAX_BULK = 1_000_000;

function body(request: { body: unknown }): Record<string, unknown> {
  return request.body !== null && typeof request.body === 'object' ? (request.body as Record<string, unknown>) : {};
}

/**
 * A webhook as the control endpoints show it: without its signature key (they take no credentials), and
 * `hasSignatureKey` saying whether it has one. The admin API, with a token, answers the key as the product does.
 */
function withoutKey<T extends { signatureKey: string }>({
  signatureKey,
  ...hook
}: T): Omit<T, 'signatureKey'> & { hasSignatureKey: boolean } {
  return { ...hook, hasSignatureKey: signatureKey !== '' };
}

/** What the control endpoints work with besides the context. */
export interface ControlContext extends EmulatorContext {
  clock: EmulatorClock;
  /** Where the emulator is reached, for the URLs of a Survey123 payload. */
  publicUrl: () => string;
}

/**
 * The emulator's own control endpoints (outside the admin API, JSON in and out): fire GP jobs and feature
 * edits (remembered, for the REST resources their payloads point to), inspect webhooks and deliveries, move
 * the clock.
 */
export async function controlRoutes(app: FastifyInstance, context: ControlContext): Promise<void> {
  const { store, engine, clock, tokens } = context;
  // Bodies are read as the REST edits read their parameters: a BigInteger value beyond 2^53 keeps every digit.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, text, done) => {
    try {
      done(null, parseExactJson(text as string));
    } catch (err) {
      done(new AdminError(400, `Invalid request: the body is not JSON (${(err as Error).message}).`), undefined);
    }
  });
  /** The layer `layerId` of `service`; 400 when it has none. */
  const layerOf = (service: CatalogService, layerId: unknown): FeatureLayer => {
    const layer = Number.isSafeInteger(layerId) ? store.features.of(serviceKey(service), service).layer(layerId as number) : undefined;
    if (layer === undefined)
      throw invalidParameter(
        'layerId',
        `must be a layer of ${service.serviceName}: ${store.features
          .of(serviceKey(service), service)
          .layers.map(({ id }) => id)
          .join(', ')}`,
      );
    return layer;
  };
  const activeHooksOf = (service: CatalogService) => store.webhooksOf(service).filter((hook) => hook.active);
  serviceRoute<ControlParams>(
    app,
    'POST',
    '/jobs',
    async (request) => {
      const service = store.service(request.params.folder, request.params.service);
      if (service.type !== 'GPServer') throw new AdminError(400, `Service '${request.params.service}' is not a GPServer.`);
      const outcome = body(request).outcome ?? 'succeeded';
      if (!outcomes.includes(outcome as (typeof outcomes)[number]))
        throw invalidParameter('outcome', `must be one of ${outcomes.join(', ')}`);
      const jobId = `j${randomBytes(16).toString('hex')}`;
      const job = {
        jobId,
        service: serviceKey(service),
        taskName: service.serviceName,
        outcome: outcome as (typeof outcomes)[number],
        submitted: clock.now(),
      };
      store.history.recordJob(job);
      const deliveries = engine.fire(activeHooksOf(service), { kind: 'gp', outcome: job.outcome, jobId, taskName: job.taskName });
      return { jobId, deliveries: deliveries.map((delivery) => delivery.id) };
    },
    '/emulator/services',
  );

  /** A feature service of the catalogue, by the control path's name; 400 for another type. */
  const featureService = (request: { params: ControlParams }): CatalogService => {
    const service = store.service(request.params.folder, request.params.service);
    if (service.type !== 'FeatureServer') throw new AdminError(400, `Service '${request.params.service}' is not a FeatureServer.`);
    return service;
  };
  const controlRoute = (tail: string, handler: (request: FastifyRequest<{ Params: ControlParams }>) => Promise<unknown>): void =>
    serviceRoute<ControlParams>(app, 'POST', tail, handler, '/emulator/services');

  // The REST applyEdits of a whole service, without a token: {"edits":[{"id":0,"adds":[…],…}]}.
  controlRoute('/applyEdits', async (request) => {
    const service = featureService(request);
    const { edits, useGlobalIds = false, rollbackOnFailure = true, user = 'admin', lose = false } = body(request);
    if (!Array.isArray(edits) || !edits.every((edit) => Number.isSafeInteger((edit as { id?: unknown } | null)?.id))) {
      throw invalidParameter('edits', 'must be an array such as [{"id":0,"adds":[{"attributes":{…},"geometry":{…}}]}]');
    }
    for (const [name, value] of Object.entries({ useGlobalIds, rollbackOnFailure, lose }))
      if (typeof value !== 'boolean') throw invalidParameter(name, 'must be true or false');
    if (typeof user !== 'string' || user === '') throw invalidParameter('user', 'must be a user name');
    const outcome = applyFeatureEdits(
      context,
      service,
      edits as LayerEdits[],
      { useGlobalIds, rollbackOnFailure, user, lose } as ApplyEditsOptions & { lose: boolean },
    );
    return { serverGen: outcome.serverGen ?? null, results: outcome.results, deliveries: outcome.deliveries };
  });

  // One inspection submitted as Survey123 submits it: a parent, related rows and photos in one applyEdits, then,
  // with webhookUrl, the Survey123 webhook payload POSTed there.
  controlRoute('/submissions', async (request) => submitInspection(context, featureService(request), body(request) as SubmissionRequest));

  // N sample features added to one layer in one generation.
  controlRoute('/bulk', async (request) => {
    const service = featureService(request);
    const { layerId = 0, count, lose = false } = body(request);
    if (!Number.isSafeInteger(count) || (count as number) < 1 || (count as number) > MAX_BULK)
      throw invalidParameter('count', `must be an integer from 1 to ${MAX_BULK}`);
    if (typeof lose !== 'boolean') throw invalidParameter('lose', 'must be true or false');
    const layer = layerOf(service, layerId);
    const adds = Array.from({ length: count as number }, (_, index) => sampleFeature(layer.definition, layer.count + index + 1));
    const outcome = applyFeatureEdits(context, service, [{ id: layer.id, adds }], {
      useGlobalIds: false,
      rollbackOnFailure: true,
      user: 'admin',
      lose,
    });
    return { serverGen: outcome.serverGen, count: adds.length, deliveries: outcome.deliveries };
  });

  // A change of one type, made to a sample feature (FeaturesCreated adds one; FeaturesUpdated and FeaturesDeleted
  // touch the layer's newest, adding one first, unannounced, when the layer has none), or to no feature for the
  // other types. A lost edit is kept (extractChanges returns it) but not delivered.
  controlRoute('/edits', async (request) => {
    const service = featureService(request);
    const { changeType = 'FeaturesCreated', layerId = 0, lose = false } = body(request);
    const canonical = featureChangeTypes.find((name) => name.toLowerCase() === String(changeType).toLowerCase());
    if (canonical === undefined) throw invalidParameter('changeType', `must be one of ${featureChangeTypes.join(', ')}`);
    if (typeof lose !== 'boolean') throw invalidParameter('lose', 'must be true or false');
    const layer = layerOf(service, layerId);
    const apply = (edits: LayerEdits, unannounced: boolean) =>
      applyFeatureEdits(context, service, [edits], { useGlobalIds: false, rollbackOnFailure: true, user: 'admin', lose: unannounced });
    let change: FeatureServiceChange | undefined;
    let deliveries: string[];
    if (canonical === 'FeaturesCreated' || canonical === 'FeaturesUpdated' || canonical === 'FeaturesDeleted') {
      if (canonical !== 'FeaturesCreated' && layer.count === 0) apply({ id: layer.id, adds: [sampleFeature(layer.definition, 1)] }, true);
      const newest = layer.row(layer.newestObjectId() ?? 0);
      const edits: LayerEdits =
        canonical === 'FeaturesCreated' || newest === undefined
          ? { id: layer.id, adds: [sampleFeature(layer.definition, layer.count + 1)] }
          : canonical === 'FeaturesUpdated'
            ? { id: layer.id, updates: [sampleUpdate(layer.definition, newest)] }
            : { id: layer.id, deletes: [newest.attributes[layer.definition.objectIdField]] };
      ({ change, deliveries } = apply(edits, lose));
    } else {
      ({ change, deliveries } = recordServiceChange(context, service, canonical, () => [layer], lose));
    }
    const { serviceGenBefore, serverGen, layers } = change!;
    return { deliveries, serverGens: [serviceGenBefore, serverGen], layerGens: [layers[0]!.genBefore, serverGen] };
  });

  app.post('/emulator/tokens/expire', async () => ({ expired: tokens.expireAll() }));

  app.get('/emulator/webhooks', async () => ({
    webhooks: [...store.webhooks.values()].map((hook) => ({
      ...withoutKey(hook),
      failuresByDay: formatFailuresByDay(engine.failuresByDay(hook.id)),
    })),
    onlineWebhooks: [...store.onlineWebhooks.values()].map((hook) => ({
      ...withoutKey(hook),
      consecutiveFailures: engine.consecutiveFailures(hook.globalId),
    })),
  }));

  app.get('/emulator/deliveries', async () => ({ deliveries: engine.deliveries() }));

  app.post('/emulator/clock', async (request) => {
    const { now, advanceDays } = body(request);
    if (now !== undefined) {
      if (!Number.isInteger(now)) throw invalidParameter('now', 'must be epoch milliseconds');
      clock.set(now as number);
    }
    if (advanceDays !== undefined) {
      if (!Number.isInteger(advanceDays)) throw invalidParameter('advanceDays', 'must be an integer');
      clock.advanceDays(advanceDays as number);
    }
    return { now: clock.now() };
  });
}
