import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AdminError } from '../admin-error.js';
import { serviceRoute, type ServiceParams } from '../context.js';
import { extractChanges, type ChangesAnswer } from '../features/extract-changes.js';
import { readExtractRequest } from '../features/extract-request.js';
import { writeChanges } from '../features/write-changes.js';
import { Params } from '../params.js';
import { sendAdmin } from '../respond.js';
import { RESULT_TTL_MS } from '../rest-history.js';
import { addressedService, type FeatureRoutesContext } from './feature-context.js';

type ExtractParams = ServiceParams & { extractId: string };

/** The request's URL path (no query), for the URLs an answer points to. */
const pathOf = (request: FastifyRequest): string => request.url.split('?')[0]!.replace(/\/+$/, '');

/** Streams an `extractChanges` answer as JSON: a large one is never held whole as one string. */
export const sendChanges = (reply: FastifyReply, answer: ChangesAnswer): FastifyReply =>
  reply
    .code(200)
    .type('application/json; charset=utf-8')
    .send(Readable.from(writeChanges(answer)));

/**
 * A feature service's `extractChanges`: answered at once, or with `async=true` as a job whose status URL answers
 * `InProgress` once, then `Completed` with a `resultUrl` on the emulator's storage path (no token; it expires), or
 * `Failed` with the product's error (`layers` that disagree with `layerServerGens`, a bad `where`). The answer is
 * taken when the request arrives: rows as of the end of the range.
 */
export async function extractChangesRoutes(app: FastifyInstance, context: FeatureRoutesContext): Promise<void> {
  const { store, clock } = context;

  serviceRoute<ServiceParams>(
    app,
    ['GET', 'POST'],
    '/FeatureServer/extractChanges',
    async (request, reply) => {
      const { key, features, capabilities } = addressedService(context, request);
      const extract = readExtractRequest(Params.of(request), capabilities);
      const path = pathOf(request);
      const serviceUrl = `${context.publicUrl()}${path.slice(0, path.lastIndexOf('/extractChanges'))}`;
      const options = { now: clock.now(), deletesAsGlobalIds: context.online, serviceUrl };
      if (!extract.async) return sendChanges(reply, extractChanges(store.features, features, extract, options));
      const id = randomBytes(16).toString('hex');
      let outcome: { answer: ChangesAnswer } | { failure: string };
      try {
        outcome = { answer: extractChanges(store.features, features, extract, options) };
      } catch (err) {
        if (!(err instanceof AdminError)) throw err;
        outcome = { failure: err.messages.at(-1)! };
      }
      store.history.recordExtract({ id, service: key, submitted: options.now, polls: 0, ...outcome });
      return sendAdmin(request, reply, {
        statusUrl: `${context.publicUrl()}${pathOf(request).replace(/\/extractChanges$/, '')}/jobs/${id}`,
      });
    },
    '',
  );

  serviceRoute<ExtractParams>(
    app,
    ['GET', 'POST'],
    '/FeatureServer/jobs/:extractId',
    async (request, reply) => {
      const job = store.history.extract(request.params.extractId);
      if (job === undefined || job.service !== addressedService(context, request).key) {
        throw new AdminError(404, `Job '${request.params.extractId}' not found.`);
      }
      job.polls += 1;
      const status = {
        submissionTime: job.submitted,
        lastUpdatedTime: clock.now(),
        responseType: 'esriDataChangesResponseTypeEdits',
        transportType: 'esriTransportTypeUrl',
      };
      // The first request sees the job running, as a client polling the real product usually does.
      if (job.polls === 1) return sendAdmin(request, reply, { status: 'InProgress', ...status });
      if (job.answer === undefined) return sendAdmin(request, reply, { status: 'Failed', ...status, error: job.failure });
      if (job.resultId === undefined) {
        job.resultId = randomBytes(16).toString('hex');
        store.history.storeResult(job.resultId, job.answer, clock.now() + RESULT_TTL_MS);
      }
      return sendAdmin(request, reply, {
        status: 'Completed',
        ...status,
        resultUrl: `${context.publicUrl()}/emulator/storage/${job.resultId}`,
      });
    },
    '',
  );
}

/** The storage path results are downloaded from, as from the product's signed storage: no token, gone once expired. */
export async function storageRoutes(app: FastifyInstance, context: Pick<FeatureRoutesContext, 'store' | 'clock'>): Promise<void> {
  app.route<{ Params: { resultId: string } }>({
    method: ['GET', 'POST'],
    url: '/emulator/storage/:resultId',
    handler: async (request, reply) => {
      const answer = context.store.history.result(request.params.resultId, context.clock.now());
      if (answer === undefined) throw new AdminError(404, 'The result does not exist or has expired.');
      return sendChanges(reply, answer);
    },
  });
}
