import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { featureChangeTypes } from '../../arcgis/change-types.js';
import { AdminError, invalidParameter } from '../admin-error.js';
import type { EmulatorClock } from '../clock.js';
import { serviceRoute, type EmulatorContext, type ServiceParams } from '../context.js';
import { formatFailuresByDay } from '../delivery/deactivation-policy.js';
import { matchesChangeType } from '../delivery/delivery-engine.js';
import { serviceKey } from '../store.js';
import type { CatalogService } from '../types.js';

type ControlParams = ServiceParams;

const outcomes = ['succeeded', 'failed', 'canceled'] as const;

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
}

/**
 * The emulator's own control endpoints (outside the admin API, JSON in and out): fire GP jobs and feature
 * edits (remembered, for the REST resources their payloads point to), inspect webhooks and deliveries, move
 * the clock.
 */
export async function controlRoutes(app: FastifyInstance, context: ControlContext): Promise<void> {
  const { store, engine, clock } = context;
  const activeHooksOf = (service: CatalogService) => store.webhooksOf(service).filter((hook) => hook.active);
  // A hosted service is also the Online organization's service of that name: its webhooks fire on its edits.
  const onlineHooksOf = (service: CatalogService, changeType: string) =>
    [...store.onlineWebhooks.values()].filter(
      (hook) => service.hosted === true && hook.serviceName === service.serviceName && matchesChangeType(hook.changeTypes, changeType),
    );

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

  serviceRoute<ControlParams>(
    app,
    'POST',
    '/edits',
    async (request) => {
      const service = store.service(request.params.folder, request.params.service);
      if (service.type !== 'FeatureServer') throw new AdminError(400, `Service '${request.params.service}' is not a FeatureServer.`);
      const { changeType = 'FeaturesCreated', layerId = 0, lose = false } = body(request);
      const canonical = featureChangeTypes.find((name) => name.toLowerCase() === String(changeType).toLowerCase());
      if (canonical === undefined) throw invalidParameter('changeType', `must be one of ${featureChangeTypes.join(', ')}`);
      if (!Number.isInteger(layerId) || (layerId as number) < 0) throw invalidParameter('layerId', 'must be a non-negative integer');
      if (typeof lose !== 'boolean') throw invalidParameter('lose', 'must be true or false');
      const hooks = activeHooksOf(service).filter((hook) => matchesChangeType(hook.changeTypes, canonical));
      const edit = store.history.recordEdit(serviceKey(service), canonical, layerId as number, clock.now());
      // Fired at the edit's recorded time; each changesUrl selects this edit, from the generation before it in the
      // service (Enterprise) or the layer (Online). A lost edit is kept (extractChanges returns it) but not delivered.
      const event = { kind: 'feature' as const, changeType: canonical, layerId: edit.layerId };
      const serverGens = [edit.serviceGenBefore, edit.serverGen] as const;
      const layerGens = [edit.layerGenBefore, edit.serverGen] as const;
      const deliveries = lose
        ? []
        : [
            ...engine.fire(hooks, { ...event, serverGens }, edit.when),
            ...engine.fireOnline(onlineHooksOf(service, canonical), { ...event, serverGens: layerGens }, edit.when),
          ];
      return { deliveries: deliveries.map((delivery) => delivery.id), serverGens, layerGens };
    },
    '/emulator/services',
  );

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
