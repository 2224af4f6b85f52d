import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { Queue } from 'bullmq';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ChangesStatus } from '../changes/changes-status.js';
import type { DashboardAuth, DashboardChanges } from '../config/load-config.js';
import { DashboardRateLimitError, GeohookError, QueueUnavailableError } from '../errors.js';
import { readableJobData, readableJobName } from '../events/stored-event.js';
import type { EventQueue } from '../queue/event-queue.js';
import { allQueueNames } from '../queue/names.js';
import type { ServiceReport } from '../queue/service-report.js';
import { sendError, sendNotFound } from '../receiver/error-reply.js';
import type { FailingService } from '../redis/failing-services.js';
import { allowsChange } from './change-policy.js';
import { changesPage } from './changes-page.js';
import { denyFraming } from './frame-headers.js';
import { LoginLimiter } from './login-limiter.js';
import { loginRoutes } from './login-routes.js';
import type { MirrorView } from './mirror-section.js';
import { recentEvents, type RecentQueue } from './recent-events.js';
import { relaysPage, type RelaysPageOptions } from './relays-page.js';
import { servicesPage } from './services-page.js';
import { deviceCookie, isAuthorized, isKnownDevice } from './session.js';
import { subscriptionsPage, type SubscriptionsPageOptions } from './subscriptions-page.js';

/** Options of the {@link dashboard} plugin, registered with `prefix: '/ui'`. */
export interface DashboardOptions {
  /** Who may open the dashboard (`config.dashboard.auth`). */
  auth: DashboardAuth;
  /** What the dashboard may change in the queues (`config.dashboard.changes`). @defaultValue 'jobs' */
  changes?: DashboardChanges;
  /** The queues the board shows. */
  eventQueue: EventQueue;
  /**
   * Further queues the board shows after the event queues (change ranges and events, relay routes', subscriptions'),
   * listed again on every call of the board's API: subscriptions come and go at run time. @defaultValue none
   */
  queues?: () => Promise<readonly Queue[]>;
  /** The queues whose jobs the recent events list beside the event queues: change events, relay routes' tries. @defaultValue none */
  recentQueues?: () => readonly RecentQueue[];
  /** What the services view shows (`readServiceReports`). */
  services: () => Promise<ServiceReport[]>;
  /** The services self-registration could not register (`readFailingServices`). @defaultValue none */
  failing?: () => Promise<FailingService[]>;
  /** What the changes view shows (`readChangesStatus`). @defaultValue no service followed */
  changeEvents?: () => Promise<ChangesStatus>;
  /** What the relays view shows (`readRelayStatus`). @defaultValue no route */
  relays?: RelaysPageOptions['status'];
  /** The relays view's dry runs of a route on its last events (`RelayDryRunner`). @defaultValue none */
  relayDryRun?: RelaysPageOptions['dryRun'];
  /** What the subscriptions view shows (`readSubscriptionStatus`). @defaultValue no subscription */
  subscriptions?: SubscriptionsPageOptions['status'];
  /** The PostGIS mirror's layers on the services view (`readMirrorStatus`). @defaultValue no mirror section */
  mirror?: () => Promise<MirrorView>;
  /**
   * A webhook state older than this (ms) is shown stale: no registration pass checked it lately.
   * @defaultValue three registration intervals of 300 s
   */
  staleAfterMs?: number;
  /** Session cookies are Secure even over plain HTTP (TLS ends at a proxy). @defaultValue false */
  secureCookie?: boolean;
}

/** What the board needs beside the dashboard's options. */
interface BoardOptions extends DashboardOptions {
  limiter: LoginLimiter;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Three registration passes of the default interval. */
const DEFAULT_STALE_AFTER_MS = 3 * 300_000;

const WEB_FONT = 'fonts.googleapis.com';
const WEB_FONT_LINK = /<link[^>]*fonts\.googleapis\.com[^>]*>\s*/g;

/** The name of the board's header icon that opens the menu of geohook's own pages (Bull Board gives it none). */
export const MENU_LABEL = 'geohook pages';

/**
 * The names of Bull Board's other unnamed header icons, in the order it draws them before the menu (Redis details,
 * then after its Docs link, full screen and settings).
 */
export const HEADER_LABELS = ['Redis details', 'Full screen', 'Settings'] as const;

/**
 * Names the board's header icons for screen readers and as tooltips, as React draws (and redraws) them: the menu by
 * its popup, the others by their place before it, counted from the last.
 */
const HEADER_LABELS_SCRIPT =
  '<script>new MutationObserver(function () {' +
  `var names = ${JSON.stringify(HEADER_LABELS)}; var name = function (button, text) { button.setAttribute('aria-label', text); button.title = text; };` +
  'document.querySelectorAll(\'header button[aria-haspopup="menu"]:not([aria-label])\').forEach(function (button) {' +
  `name(button, '${MENU_LABEL}'); });` +
  "var unnamed = [...document.querySelectorAll('header ul button:not([aria-haspopup]):not([aria-label])')];" +
  'if (unnamed.length > 0 && unnamed.length <= names.length) unnamed.reverse().forEach(function (button, index) {' +
  'name(button, names[names.length - 1 - index]); });' +
  '}).observe(document.documentElement, { childList: true, subtree: true });</script>';

/** Bull Board's page as geohook serves it: without the web font it asks Google for (geohook runs offline), its header icons named. */
const boardPage = (html: string): string => html.replace(WEB_FONT_LINK, '').replace('</body>', `${HEADER_LABELS_SCRIPT}</body>`);

/**
 * A browser marks each request with where it comes from. Cookies and basic-auth credentials ride along
 * on requests other sites make, and SameSite=Strict still lets a sibling subdomain through: changes are
 * taken only from the board's own pages (or from clients that are not browsers and send no such header).
 */
function fromAnotherOrigin(request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site'];
  return !SAFE_METHODS.has(request.method) && site !== undefined && site !== 'same-origin';
}

/** Bull Board's pages, static assets and JSON API, and the services view, all behind the dashboard credentials. */
async function board(app: FastifyInstance, options: BoardOptions): Promise<void> {
  const { auth, eventQueue, limiter } = options;
  const changes = options.changes ?? 'jobs';
  // Bull Board's own switch hides every action of a read-only queue (and refuses them); it has none for
  // `jobs`, whose other buttons stay on the board and are refused below.
  const adapterOptions = { readOnlyMode: changes === 'none' };
  const prefix = app.prefix;
  const tokenMode = 'token' in auth;
  const serverAdapter = new FastifyAdapter().setBasePath(prefix);
  const uiConfig = {
    boardTitle: 'geohook',
    miscLinks: [
      { text: 'Services', url: `${prefix}/services` },
      { text: 'Changes', url: `${prefix}/changes` },
      { text: 'Relays', url: `${prefix}/relays` },
      { text: 'Subscriptions', url: `${prefix}/subscriptions` },
    ],
  };
  const bullBoard = createBullBoard({ queues: [], serverAdapter, options: { uiConfig } });
  app.addHook('onSend', async (_request, _reply, payload) =>
    typeof payload === 'string' && payload.includes(WEB_FONT) ? boardPage(payload) : payload,
  );

  // The queues exist only once Redis was first reached, which may be long after start-up: the board
  // takes them on the first API call that finds them. The further queues are listed again on each call, and the
  // board's set replaced when they changed (a subscription made or deleted).
  let eventAdapters: BullMQAdapter[] | undefined;
  let shown: string | undefined;
  const attachQueues = async (): Promise<void> => {
    eventAdapters ??= [
      ...allQueueNames.map((name) => {
        const adapter = new BullMQAdapter(eventQueue.queue(name), adapterOptions);
        // Jobs hold the stored form: the board shows each event with its payload, as consumers get it.
        adapter.setFormatter('data', readableJobData);
        adapter.setFormatter('name', readableJobName);
        return adapter;
      }),
      new BullMQAdapter(eventQueue.backfillQueue(), adapterOptions),
    ];
    const queues = (await options.queues?.()) ?? [];
    const names = queues.map((queue) => queue.name).join('\n');
    if (names === shown) return;
    bullBoard.replaceQueues([...eventAdapters, ...queues.map((queue) => new BullMQAdapter(queue, adapterOptions))]);
    shown = names;
  };

  const challenge = tokenMode ? 'Bearer realm="geohook"' : 'Basic realm="geohook", charset="UTF-8"';

  app.addHook('onRequest', async (request, reply) => {
    const api = request.url.startsWith(`${prefix}/api/`);
    // Credentials in the request (bearer token, basic auth) are guesses to slow down; a session cookie is not, and
    // a browser that signed in before is not slowed down with its address (a guesser there locks no one out).
    const guess = request.headers.authorization !== undefined;
    const known = guess && isKnownDevice(auth, request.headers);
    const waitSeconds = guess && !known ? limiter.waitSeconds(request.ip) : 0;
    if (waitSeconds > 0) return sendError(reply, new DashboardRateLimitError(waitSeconds));
    if (!isAuthorized(auth, request.headers)) {
      if (guess) limiter.failed(request.ip);
      const page = request.method === 'GET' && !api && !request.url.startsWith(`${prefix}/static/`);
      if (tokenMode && page) return reply.redirect(`${prefix}/login`, 302);
      reply.header('www-authenticate', challenge);
      return sendError(reply, new GeohookError('GEOHOOK_ERR_DASHBOARD_AUTH', 'the dashboard needs its credentials'));
    }
    if (guess && !known)
      reply.header(
        'set-cookie',
        deviceCookie(auth, { path: prefix, secure: options.secureCookie === true || request.protocol === 'https' }),
      );
    if (fromAnotherOrigin(request)) {
      return sendError(reply, new GeohookError('GEOHOOK_ERR_DASHBOARD_AUTH', 'changes are accepted from the dashboard itself only'));
    }
    if (!allowsChange(changes, request.method, request.routeOptions.url?.slice(prefix.length) ?? '')) {
      const allowed = changes === 'none' ? 'no change' : 'retrying, removing and promoting jobs only';
      return sendError(reply, new GeohookError('GEOHOOK_ERR_DASHBOARD_READ_ONLY', `the dashboard allows ${allowed} (dashboard.changes)`));
    }
    if (!api) return;
    try {
      await attachQueues();
    } catch (err) {
      if (err instanceof QueueUnavailableError) return sendError(reply, err);
      return sendError(reply, new QueueUnavailableError(`cannot list the queues from Redis: ${(err as Error).message}`, 5, { cause: err }));
    }
  });

  await app.register(serverAdapter.registerPlugin());
  await app.register(servicesPage, {
    services: options.services,
    failing: options.failing ?? (async () => []),
    ...(options.mirror === undefined ? {} : { mirror: options.mirror }),
    recent: (query) => recentEvents(eventQueue, query, options.recentQueues?.() ?? []),
    staleAfterMs: options.staleAfterMs ?? DEFAULT_STALE_AFTER_MS,
    boardPath: prefix,
  });
  await app.register(changesPage, {
    status: options.changeEvents ?? (async () => ({ queue: {}, ranges: {}, services: [] })),
    boardPath: prefix,
  });
  await app.register(relaysPage, {
    status: options.relays ?? (async () => ({ routes: [] })),
    boardPath: prefix,
    ...(options.relayDryRun === undefined ? {} : { dryRun: options.relayDryRun }),
  });
  await app.register(subscriptionsPage, { status: options.subscriptions ?? (async () => []), boardPath: prefix });
}

/**
 * The queue dashboard: Bull Board over the event queues at the plugin's prefix, and the services view
 * (`<prefix>/services`), with HTTP basic auth, or in token mode a bearer token and a login page that sets a
 * session cookie. Wrong credentials are slowed down per client address ({@link LoginLimiter}).
 */
export async function dashboard(app: FastifyInstance, options: DashboardOptions): Promise<void> {
  app.addHook('onSend', denyFraming);
  app.setNotFoundHandler(sendNotFound);
  const limiter = new LoginLimiter();
  const { auth } = options;
  if ('token' in auth) await app.register(loginRoutes, { token: auth.token, limiter, secureCookie: options.secureCookie ?? false });
  // Not `prefix` (Fastify's registration option), which the children inherit already.
  const { prefix: _prefix, ...boardOptions } = options as DashboardOptions & { prefix?: string };
  await app.register(board, { ...boardOptions, limiter });
}
