import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AdminError } from '../admin-error.js';
import { requestToken, serviceRoute, type EmulatorContext, type ServiceParams } from '../context.js';
import { Params } from '../params.js';
import { sendAdmin, sendRestError, toRestError } from '../respond.js';
import { jobParameter, jobStatus } from '../rest-gp.js';
import { serviceKey } from '../store.js';
import type { FiredJob } from '../types.js';
import { extractChangesRoutes } from './extract-changes.js';
import { featureAttachmentRoutes } from './feature-attachments.js';
import type { FeatureRoutesContext } from './feature-context.js';
import { featureEditRoutes } from './feature-edits.js';
import { featureQueryRoutes } from './feature-query.js';
import { featureServiceRoutes } from './feature-service.js';

type JobParams = ServiceParams & { task: string; jobId: string };
type ParameterParams = JobParams & { kind: string; param: string };

/** The request's URL path (no query). */
const pathOf = (request: FastifyRequest): string => request.url.split('?')[0]!.replace(/\/+$/, '');

/**
 * The REST resources clients and payloads point to, under `/arcgis/rest/services` (register with that
 * prefix; the Online organization's too, with `online`): GP job status and parameters (`statusURL`), and
 * feature services with their features (resources, query, editing, `extractChanges`). Every request
 * needs a valid token of any user, in the query, the form or a bearer header; errors are answered in the
 * REST shape with HTTP 200, never with a stack.
 */
export async function restRoutes(
  app: FastifyInstance,
  context: EmulatorContext & { publicUrl: () => string; online?: boolean },
): Promise<void> {
  const { store, tokens } = context;
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

  // The routes below inherit this plugin's prefix: the context passed on must not carry it again.
  const { clock, engine, publicUrl, online = false } = context;
  const features: FeatureRoutesContext = { store, tokens, clock, engine, publicUrl, online };
  await app.register(featureServiceRoutes, features);
  await app.register(featureQueryRoutes, features);
  await app.register(featureEditRoutes, features);
  await app.register(featureAttachmentRoutes, features);
  await app.register(extractChangesRoutes, features);
}
