import { randomBytes } from 'node:crypto';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AdminError } from '../admin-error.js';
import { requestToken, serviceRoute, type EmulatorContext, type ServiceParams } from '../context.js';
import { Params } from '../params.js';
import { sendAdmin, sendRestError, toRestError } from '../respond.js';
import { extractChanges, readChangesQuery } from '../rest-changes.js';
import { jobParameter, jobStatus } from '../rest-gp.js';
import { serviceKey } from '../store.js';
import type { FiredJob } from '../types.js';
import { capabilitySet } from '../validate-webhook.js';
import { EMULATED_VERSION } from './discovery.js';

type JobParams = ServiceParams & { task: string; jobId: string };
type ParameterParams = JobParams & { kind: string; param: string };
type ExtractParams = ServiceParams & { extractId: string };

/** What a change-tracked feature service's `extractChanges` supports, as its resource says (the emulator's subset). */
const EXTRACT_CHANGES_CAPABILITIES = Object.freeze({
  supportsReturnIdsOnly: true,
  supportsReturnExtentOnly: false,
  supportsReturnAttachments: false,
  supportsLayerQueries: false,
  supportsGeometry: false,
  supportsFeatureReturn: true,
  supportsReturnHasGeometryUpdates: false,
  supportsFieldsToCompare: false,
  supportsServerGens: true,
});

/** The request's URL path (no query), for the URLs an answer points to. */
const pathOf = (request: FastifyRequest): string => request.url.split('?')[0]!.replace(/\/+$/, '');

/**
 * The REST resources clients and payloads point to, under `/arcgis/rest/services` (register with that
 * prefix; the Online organization's too): a feature service's own resource, GP job status and parameters
 * (`statusURL`), and feature services' `extractChanges` (`changesUrl`), also asynchronous. Every request
 * needs a valid token of any user, in the query, the form or a bearer header; errors are answered in the
 * REST shape with HTTP 200, never with a stack.
 */
export async function restRoutes(app: FastifyInstance, context: EmulatorContext & { publicUrl: () => string }): Promise<void> {
  const { store, clock, tokens } = context;
  const history = store.history;

  app.setErrorHandler<FastifyError | AdminError>((err, request, reply) => {
    const error = toRestError(err);
    if (error.code === 500) request.log.error({ err }, 'emulator REST request failed');
    return sendRestError(reply, error);
  });
  app.setNotFoundHandler((request, reply) =>
    sendRestError(reply, new AdminError(404, 'Service not found.', `No resource at ${pathOf(request)}.`)),
  );
  app.addHook('preHandler', async (request) => {
    const params = Params.of(request);
    params.oneOf('f', ['json', 'pjson']);
    tokens.authenticate(requestToken(request, params));
  });

  /** Registers `handler` for GET and POST at `/<service><tail>` and `/<folder>/<service><tail>`. */
  const route = <P extends ServiceParams>(
    tail: string,
    handler: (request: FastifyRequest<{ Params: P }>, reply: FastifyReply) => Promise<unknown>,
  ): void => serviceRoute<P>(app, ['GET', 'POST'], tail, handler, '');

  const jobOf = (request: FastifyRequest<{ Params: JobParams }>): FiredJob => {
    const service = store.service(request.params.folder, `${request.params.service}.GPServer`);
    const job = history.job(request.params.jobId);
    if (job === undefined || job.service !== serviceKey(service) || job.taskName !== request.params.task) {
      throw new AdminError(404, `Job '${request.params.jobId}' does not exist or is inaccessible.`);
    }
    return job;
  };

  route<JobParams>('/GPServer/:task/jobs/:jobId', async (request, reply) => sendAdmin(request, reply, jobStatus(jobOf(request))));

  route<ParameterParams>('/GPServer/:task/jobs/:jobId/:kind/:param', async (request, reply) => {
    const job = jobOf(request);
    const { kind, param } = request.params;
    const parameter = kind === 'results' || kind === 'inputs' ? jobParameter(job, kind, param) : undefined;
    if (parameter === undefined) throw new AdminError(404, `Parameter '${param}' of job '${job.jobId}' not found.`);
    return sendAdmin(request, reply, parameter);
  });

  /** A feature service of the catalogue and its layers: layer 0 and every layer edits were fired on. */
  const featureLayers = (request: FastifyRequest<{ Params: ServiceParams }>) => {
    const service = store.service(request.params.folder, `${request.params.service}.FeatureServer`);
    const key = serviceKey(service);
    const ids = [...new Set([0, ...history.editedLayers(key)])].sort((a, b) => a - b);
    const layers = ids.map((id) => ({ id, name: id === 0 ? service.serviceName : `${service.serviceName}_${id}` }));
    return { service, key, layers };
  };

  // The feature service's own resource, as clients read it before they call its operations; with change
  // tracking, each layer's server generations.
  route<ServiceParams>('/FeatureServer', async (request, reply) => {
    const { service, key, layers } = featureLayers(request);
    const changeTracking = capabilitySet(service).has('changetracking');
    const now = clock.now();
    return sendAdmin(request, reply, {
      currentVersion: EMULATED_VERSION,
      serviceDescription: '',
      hasVersionedData: service.versioned === true || service.branchVersioned === true,
      supportsDisconnectedEditing: false,
      syncEnabled: service.syncEnabled === true,
      capabilities: service.capabilities ?? '',
      ...(changeTracking
        ? {
            changeTrackingInfo: { lastSyncDate: now, layerServerGens: layers.map(({ id }) => history.layerServerGen(key, id, now)) },
            extractChangesCapabilities: EXTRACT_CHANGES_CAPABILITIES,
          }
        : {}),
      layers,
      tables: [],
    });
  });

  // A layer's own resource: how its data is versioned and archived, which decides whether a non-hosted
  // service takes webhooks.
  route<ServiceParams & { layer: string }>('/FeatureServer/:layer', async (request, reply) => {
    const { service, layers } = featureLayers(request);
    const layer = /^\d+$/.test(request.params.layer) ? layers.find(({ id }) => id === Number(request.params.layer)) : undefined;
    if (layer === undefined) throw new AdminError(404, 'Layer not found.', `No layer ${request.params.layer} in ${service.serviceName}.`);
    return sendAdmin(request, reply, {
      currentVersion: EMULATED_VERSION,
      ...layer,
      type: 'Feature Layer',
      capabilities: service.capabilities ?? '',
      isDataVersioned: service.versioned === true || service.branchVersioned === true,
      isDataBranchVersioned: service.branchVersioned === true,
      isDataArchived: service.archiving === true,
    });
  });

  const featureService = (request: FastifyRequest<{ Params: ServiceParams }>): string =>
    serviceKey(store.service(request.params.folder, `${request.params.service}.FeatureServer`));

  route<ServiceParams>('/FeatureServer/extractChanges', async (request, reply) => {
    const service = featureService(request);
    const { async, ...query } = readChangesQuery(Params.of(request));
    if (!async) return sendAdmin(request, reply, extractChanges(history, service, query));
    const id = randomBytes(16).toString('hex');
    history.recordExtract({ id, service, query, submitted: clock.now(), polls: 0 });
    const statusUrl = `${context.publicUrl()}${pathOf(request).replace(/\/extractChanges$/, '')}/jobs/${id}`;
    return sendAdmin(request, reply, { statusUrl });
  });

  const extractOf = (request: FastifyRequest<{ Params: ExtractParams }>) => {
    const job = history.extract(request.params.extractId);
    if (job === undefined || job.service !== featureService(request))
      throw new AdminError(404, `Job '${request.params.extractId}' not found.`);
    return job;
  };

  route<ExtractParams>('/FeatureServer/jobs/:extractId', async (request, reply) => {
    const job = extractOf(request);
    job.polls += 1;
    const status = { submissionTime: job.submitted, lastUpdatedTime: clock.now() };
    // The first request sees the job running, as a client polling the real product usually does.
    if (job.polls === 1) return sendAdmin(request, reply, { status: 'InProgress', ...status });
    return sendAdmin(request, reply, { status: 'Completed', ...status, resultUrl: `${context.publicUrl()}${pathOf(request)}/result` });
  });

  route<ExtractParams>('/FeatureServer/jobs/:extractId/result', async (request, reply) => {
    const job = extractOf(request);
    if (job.polls < 2) throw new AdminError(400, 'Unable to complete operation.', `Job '${job.id}' has not completed.`);
    return sendAdmin(request, reply, extractChanges(history, job.service, job.query));
  });
}
