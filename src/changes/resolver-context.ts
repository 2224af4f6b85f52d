import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { ResolvedAdminAuth } from '../arcgis/admin-auth.js';
import { isOnlineAdminRoot, onlineOrgIdOf } from '../arcgis/online-admin.js';
import { serviceRestUrl } from '../arcgis/rest-urls.js';
import type { ServiceLocator } from '../arcgis/service-locator.js';
import { createServiceSession, type ServiceSession } from '../arcgis-request/service-session.js';
import type { ChangesServiceSettings } from '../config/types.js';
import type { AlertSender } from '../health/alert-sender.js';
import type { RedisClient } from '../redis/connection.js';
import type { AttachmentLinkOf } from './attachment-changes.js';
import type { TrackedFields } from './build-change-events.js';
import { ChangeWriter } from './change-writer.js';
import { PreviousValuesStore } from './previous-values.js';
import { RangeClaims } from './range-claims.js';
import { SubmissionStore } from './submission-store.js';

/** Options of `startChanges`. */
export interface ChangesOptions {
  /** Blocking reads: a connection of its own (`maxRetriesPerRequest: null`); the caller closes it. */
  connection: RedisClient;
  prefix: string;
  /** The hook the services deliver to, and where their REST resources are (ADMIN_URL). */
  hook: string;
  adminUrl: string;
  /** CHANGES: `folder/name.FeatureServer`. */
  services: readonly string[];
  track: TrackedFields;
  /** Per service (the `changes` section of GEOHOOK_CONFIG): its tracked fields and the layers followed. */
  byService?: Readonly<Record<string, ChangesServiceSettings>>;
  auth?: ResolvedAdminAuth;
  serviceLocator: ServiceLocator;
  /** How long a change event's id is remembered (the dedup window of events), ms. */
  dedupMs: number;
  /** Options of the change-events jobs (attempts, backoff, completed kept): the events queues'. */
  jobOptions: Queue['defaultJobOptions'];
  logger: Logger;
  /** How often scopes are checked for a watermark that moved. @defaultValue 100 */
  intervalMs?: number;
  /** Ranges resolved at once, each of another scope. @defaultValue 8 */
  concurrency?: number;
  /** The longest resolution of one range. @defaultValue 1800000 */
  timeoutMs?: number;
  /** @defaultValue globalThis.fetch */
  fetch?: typeof fetch;
  /** Makes the signed URL of an attachment of a service with `attachments: "link"` (docs/changes.md#attachment-links). */
  attachmentLink?: AttachmentLinkOf;
  /** Sends the `change.unresolvable` alert of a range that failed for good (ALERT_URL). */
  alert?: AlertSender;
}

/** What the scope follower and the range resolver share. */
export interface ResolverContext {
  options: ChangesOptions;
  log: Logger;
  claims: RangeClaims;
  previous: PreviousValuesStore;
  /** The submissions being put together (docs/submissions.md). */
  submissions: SubmissionStore;
  /** ArcGIS Online (each layer a scope of its own), and its organisation. */
  online: boolean;
  orgId: string | undefined;
  /** The longest resolution of one range, or of one snapshot, ms. */
  rangeTimeoutMs: number;
  /** A service's REST URL. */
  urlOf(service: string): string;
  /** A session on the services, each of its reads within `deadlineMs` (60 s unless given). */
  sessionOf(deadlineMs?: number): ServiceSession;
  /** The change writer, made at first use (its script needs the queue's options). */
  writer(): ChangeWriter;
}

/** The context of a resolver writing its change events to `events`. */
export function createResolverContext(options: ChangesOptions, events: Queue): ResolverContext {
  const { connection, prefix, adminUrl } = options;
  let writer: ChangeWriter | undefined;
  return {
    options,
    log: options.logger.child({ component: 'changes' }),
    claims: new RangeClaims(connection, prefix),
    previous: new PreviousValuesStore(connection),
    submissions: new SubmissionStore(connection, prefix),
    online: isOnlineAdminRoot(adminUrl),
    orgId: onlineOrgIdOf(adminUrl),
    rangeTimeoutMs: options.timeoutMs ?? 1_800_000,
    urlOf: (service) => serviceRestUrl(adminUrl, service).href,
    sessionOf: (deadlineMs = 60_000) =>
      createServiceSession({
        trusted: options.serviceLocator.trusted(options.hook),
        ...(options.auth === undefined ? {} : { auth: options.auth }),
        ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
        deadlineMs,
        pollIntervalMs: 50,
        maxPollIntervalMs: 5000,
      }),
    writer: () =>
      (writer ??= new ChangeWriter(connection, {
        queue: events,
        prefix,
        dedupMs: options.dedupMs,
        ...(options.byService === undefined ? {} : { byService: options.byService }),
      })),
  };
}
