import formBody from '@fastify/formbody';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import rawBody from 'fastify-raw-body';
import { isTestPing } from '../arcgis/payload.js';
import type { ServiceLocator } from '../arcgis/service-locator.js';
import type { HookConfig } from '../config/load-config.js';
import { GeohookError, QueueUnavailableError, type ErrorCode } from '../errors.js';
import { buildEvent } from '../events/build-event.js';
import type { EventQueue } from '../queue/event-queue.js';
import { queueNames } from '../queue/names.js';
import type { PingLog } from '../queue/ping-log.js';
import { CRC_TOKEN_ALPHABET, isCrcToken, MAX_CRC_TOKEN_LENGTH } from '../signature/crc.js';
import type { HookKeys } from '../signature/hook-keys.js';
import { sign } from '../signature/sign.js';
import { authenticate, type SignaturePolicy } from './authenticate.js';
import { claimedService } from './claimed-service.js';
import { bodyTooLarge, isBodyParseError, sendError, toGeohookError, unsupportedMediaType } from './error-reply.js';
import type { FormFields } from './form-fields.js';
import { classifiable, formPayload } from './form-payload.js';
import type { ReceiverMetrics } from './metrics.js';
import { parseJsonBody } from './parse-payload.js';
import { parseLimitedForm } from './payload-limits.js';
import type { RefusalLog } from './refusal-log.js';

/** The header `geohook doctor` marks its probes with: what they are refused is its own check, not news for the log. */
export const DOCTOR_PROBE_HEADER = 'geohook-probe';

/** A request of `geohook doctor`'s (its GET without a crc_token), logged at debug. */
const isDoctorProbe = (request: FastifyRequest): boolean => request.headers[DOCTOR_PROBE_HEADER] === 'doctor';

/** Options of the webhook routes plugin. */
export interface WebhookRouteOptions {
  hooks: ReadonlyMap<string, HookConfig>;
  /** Where the route reads each hook's current keys (in memory). */
  hookKeys: HookKeys;
  policy: SignaturePolicy;
  maxBodyBytes: number;
  eventQueue: EventQueue;
  /**
   * Which feature deliveries' ranges of server generations are tracked, and where their gaps are filled
   * (docs/backfill.md#where-gaps-are-filled).
   */
  serviceLocator: ServiceLocator;
  /** Where ArcGIS Online's test pings are recorded. */
  pings: PingLog;
  metrics: ReceiverMetrics;
  /** Where a delivery refused because Redis cannot take it is said (`createRefusalLog`), not each one at error. */
  refusals: RefusalLog;
  /** The level of "delivery accepted" (`geohook up` for a person prints each event itself). @defaultValue 'info' */
  acceptedLogLevel?: 'info' | 'debug';
}

/**
 * What the line of a delivery refused for its signature says: the hook, the service its (unverified) body names,
 * and what to run. The usual cause is a webhook signing with another key than the receiver's.
 */
function keyMismatch(hook: string, raw: Buffer): Record<string, string> {
  const claims = claimedService(raw);
  const doctor = `geohook doctor${claims === undefined ? '' : ` --service ${claims}`}`;
  return {
    hook,
    code: 'GEOHOOK_ERR_BAD_SIGNATURE',
    ...(claims === undefined ? {} : { claims: `${claims} (unverified)` }),
    fix: `the webhook may sign with another key than this receiver's: ${doctor} compares them; geohook sets the key of the webhooks it registered at its next registration pass`,
  };
}

interface HookParams {
  hook: string;
}

const FORM = 'application/x-www-form-urlencoded';
const JSON_TYPE = 'application/json';

function mediaType(request: FastifyRequest): string {
  return (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

function rawBytes(request: FastifyRequest): Buffer {
  return Buffer.isBuffer(request.rawBody) ? request.rawBody : Buffer.alloc(0);
}

/**
 * `POST /webhooks/:hook` (verify, parse, classify, enqueue, then 202) and the ArcGIS Online challenge
 * `GET /webhooks/:hook?crc_token=T`. The exact bytes are kept by fastify-raw-body; a JSON body is parsed only
 * once its signature was checked, so an anonymous client costs a read and an HMAC, never a parse. Forms (flat
 * fields, whose signature may be one of them) are split by @fastify/formbody, and a field holding JSON is
 * parsed once verified too; the signature decides between 401 and 400 before a parse error is reported.
 */
export async function webhookRoutes(app: FastifyInstance, options: WebhookRouteOptions): Promise<void> {
  const { hooks, hookKeys, policy, eventQueue, serviceLocator, pings, metrics, refusals } = options;

  // Only the two content types the GIS server sends: JSON, kept as the exact bytes (fastify-raw-body's own
  // parser would parse them before the signature is checked), and forms (@fastify/formbody). Anything else,
  // text/plain included, is 415.
  app.removeAllContentTypeParsers();
  await app.register(rawBody, { field: 'rawBody', encoding: false, global: false, runFirst: true });
  app.removeContentTypeParser(JSON_TYPE);
  app.addContentTypeParser(JSON_TYPE, { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  await app.register(formBody, { bodyLimit: options.maxBodyBytes, parser: parseLimitedForm });

  const count = (hook: string, outcome: string, status: number): void => {
    metrics.deliveries.inc({ hook: hooks.has(hook) ? hook : '(unknown)', outcome, status });
  };

  const reject = (request: FastifyRequest<{ Params: HookParams }>, reply: FastifyReply, error: GeohookError): FastifyReply => {
    const hook = request.params.hook;
    const outcome = error.statusCode === 503 ? 'unavailable' : error.statusCode >= 500 ? 'error' : 'rejected';
    if (error.statusCode === 401) metrics.signatureFailures.inc({ hook, reason: error.code });
    if (error instanceof QueueUnavailableError) refusals(error);
    else if (error.statusCode >= 500) request.log.error({ err: error.cause ?? error, hook }, 'delivery not stored');
    else if (error.code === 'GEOHOOK_ERR_BAD_SIGNATURE')
      request.log.warn(keyMismatch(hook, rawBytes(request)), 'delivery rejected: its signature matches no key of the hook');
    else if (isDoctorProbe(request)) request.log.debug({ hook, code: error.code }, "delivery rejected (geohook doctor's probe)");
    else request.log.info({ hook, code: error.code }, 'delivery rejected');
    count(hook, outcome, error.statusCode);
    return sendError(reply, error);
  };

  const hookOf = (request: FastifyRequest<{ Params: HookParams }>): HookConfig => {
    const hook = hookKeys.get(request.params.hook);
    if (hook === undefined) throw new GeohookError('GEOHOOK_ERR_UNKNOWN_HOOK', `no hook named "${request.params.hook}"`);
    return hook;
  };

  app.setErrorHandler<FastifyError | GeohookError, { Params: HookParams }>((err, request, reply) => {
    const hook = hookKeys.get(request.params.hook);
    if (hook !== undefined && !(err instanceof GeohookError) && isBodyParseError(err)) {
      const auth = authenticate(hook, policy, request.headers, rawBytes(request));
      const error = auth.ok
        ? new GeohookError('GEOHOOK_ERR_BAD_PAYLOAD', `the body is not valid ${mediaType(request)}: ${err.message}`)
        : new GeohookError(auth.code, auth.message);
      return reject(request, reply, error);
    }
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
      return reject(request, reply, bodyTooLarge(options.maxBodyBytes, request.headers['content-length']));
    return reject(request, reply, toGeohookError(err));
  });

  app.post<{ Params: HookParams }>(
    '/webhooks/:hook',
    {
      bodyLimit: options.maxBodyBytes,
      config: { rawBody: true },
      // Unknown hooks are refused before their body is read.
      onRequest: (request, _reply, done) => {
        try {
          hookOf(request);
          done();
        } catch (err) {
          done(err as GeohookError);
        }
      },
    },
    async (request, reply) => {
      const hook = hookOf(request);
      const raw = rawBytes(request);
      const contentType = mediaType(request);
      if (contentType !== JSON_TYPE && contentType !== FORM) throw unsupportedMediaType();
      const form = contentType === FORM ? (request.body as FormFields) : undefined;
      const auth = authenticate(hook, policy, request.headers, raw, form);
      if (!auth.ok) throw new GeohookError(auth.code, auth.message);

      const payload = form === undefined ? parseJsonBody(raw) : formPayload(form, policy.signatureHeaders);
      const classified = classifiable(payload, form !== undefined);
      if (isTestPing(classified)) {
        // Acknowledged and recorded, never queued: it reports no edit. A Redis outage only loses the record.
        pings.record(hook.name, Date.now()).catch((err: unknown) => request.log.warn({ err, hook: hook.name }, 'test ping not recorded'));
        request.log.info({ hook: hook.name }, 'test ping received');
        count(hook.name, 'ping', 202);
        return reply.code(202).send({ status: 'ping' });
      }
      const accepted = buildEvent(
        {
          raw,
          hook: hook.name,
          contentType,
          verified: auth.verified,
          classified,
          ...(form === undefined ? {} : { formPayload: payload }),
        },
        serviceLocator,
      );
      const { event } = accepted;

      const stopTimer = metrics.enqueueSeconds.startTimer({ queue: queueNames[event.family] });
      const { duplicate } = await eventQueue.enqueue(accepted);
      stopTimer();
      request.log[options.acceptedLogLevel ?? 'info'](
        { hook: hook.name, eventId: event.id, type: event.type, duplicate },
        'delivery accepted',
      );
      count(hook.name, duplicate ? 'duplicate' : 'accepted', 202);
      return reply.code(202).send({ status: 'accepted', id: event.id, duplicate });
    },
  );

  app.get<{ Params: HookParams; Querystring: { crc_token?: string } }>('/webhooks/:hook', async (request) => {
    const hook = hookOf(request);
    const refuse = (code: ErrorCode, message: string): GeohookError => {
      metrics.crcChallenges.inc({ hook: hook.name, outcome: code });
      if (isDoctorProbe(request)) request.log.debug({ hook: hook.name, code }, "crc challenge refused (geohook doctor's probe)");
      else request.log.info({ hook: hook.name, code }, 'crc challenge refused');
      return new GeohookError(code, message);
    };
    const token = request.query.crc_token;
    if (typeof token !== 'string' || token === '') throw refuse('GEOHOOK_ERR_MISSING_CRC_TOKEN', 'crc_token is required');
    const key = hook.secrets[0];
    if (key === undefined || !hook.crc) {
      throw refuse(
        'GEOHOOK_ERR_NO_CRC_KEY',
        `hook "${hook.name}" answers no challenge (${key === undefined ? 'no signature key' : 'crc: false'})`,
      );
    }
    if (!isCrcToken(token)) {
      throw refuse('GEOHOOK_ERR_BAD_CRC_TOKEN', `crc_token must be 1 to ${MAX_CRC_TOKEN_LENGTH} characters of ${CRC_TOKEN_ALPHABET}`);
    }
    metrics.crcChallenges.inc({ hook: hook.name, outcome: 'answered' });
    request.log.info({ hook: hook.name, tokenLength: token.length }, 'crc challenge answered');
    return { response_token: sign(key, token) };
  });
}
