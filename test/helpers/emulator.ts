import type { FastifyInstance } from 'fastify';
import type { Test } from 'tap';
import { buildEmulator, type EmulatorOptions } from '../../src/emulator/build-emulator.js';
import { defaultCatalog } from '../../src/emulator/catalog.js';
import type { CatalogService } from '../../src/emulator/types.js';
import { waitFor } from './wait.js';

export interface TestEmulator {
  app: FastifyInstance;
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** `{base_url}` of the spec: `<url>/arcgis/admin`. */
  baseUrl: string;
  /** A token of a built-in user (`admin`, `orgadmin`, `viewer`). */
  token(username?: string): Promise<string>;
  /** POSTs a form to `{base_url}/<path>` with `token` of `user` (unless `token` is given) and returns the JSON. */
  admin(path: string, params?: Record<string, string>, user?: string): Promise<Record<string, unknown>>;
  /** POSTs JSON to a control endpoint (`/emulator/...`). */
  control(path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }>;
  /** `<METHOD> <path>` of every request the emulator received, in order. */
  requests: string[];
  /** Awaited before the emulator answers a request (`<METHOD> <path>`, as in `requests`), when a test sets it. */
  beforeAnswer?: (request: string) => Promise<void>;
}

/** Resolves once every delivery the emulator started has ended, delivered or failed (its tries all made). */
export function deliveriesEnded(emulator: Pick<TestEmulator, 'url'>): Promise<true> {
  return waitFor('every delivery ended', async () => {
    const { deliveries } = (await (await fetch(`${emulator.url}/emulator/deliveries`)).json()) as { deliveries: { outcome: string }[] };
    return deliveries.every((delivery) => delivery.outcome !== 'pending');
  });
}

/** Starts an emulator on a free loopback port, closed at teardown. */
export async function startEmulator(t: Test, options: EmulatorOptions = {}): Promise<TestEmulator> {
  const app = await buildEmulator({ logLevel: 'silent', ...options });
  const requests: string[] = [];
  const emulator: Partial<TestEmulator> = {};
  app.addHook('onRequest', async (request) => {
    const line = `${request.method} ${request.url}`;
    requests.push(line);
    await emulator.beforeAnswer?.(line);
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  t.teardown(() => app.close());
  const address = app.server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  const baseUrl = `${url}/arcgis/admin`;
  const tokens = new Map<string, string>();
  const token = async (username = 'admin'): Promise<string> => {
    if (!tokens.has(username)) {
      const response = await fetch(`${url}/arcgis/sharing/rest/generateToken`, {
        method: 'POST',
        body: new URLSearchParams({ username, password: `${username}.pass`, f: 'json' }),
      });
      tokens.set(username, ((await response.json()) as { token: string }).token);
    }
    return tokens.get(username)!;
  };
  return Object.assign(emulator, {
    app,
    url,
    baseUrl,
    token,
    requests,
    async admin(path, params = {}, user = 'admin') {
      const post = async (): Promise<Record<string, unknown>> => {
        const form = new URLSearchParams({ f: 'json', ...params });
        if (!('token' in params)) form.set('token', await token(user));
        const response = await fetch(`${baseUrl}/${path}`, { method: 'POST', body: form });
        if (response.status !== 200) throw new Error(`HTTP ${response.status} from ${path}`);
        return (await response.json()) as Record<string, unknown>;
      };
      const answer = await post();
      // A test that moved the emulator clock past the token's expiry gets a fresh token, once.
      if (answer.code !== 498 || 'token' in params) return answer;
      tokens.delete(user);
      return post();
    },
    async control(path, body = {}) {
      const response = await fetch(`${url}/emulator/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    },
  } satisfies TestEmulator);
}

/** The emulator's catalog with Hosted/Parcels' layers answering `maxRecordCount` rows (and attachments) a page at most. */
export const catalogWithParcelsPage = (maxRecordCount: number): CatalogService[] =>
  defaultCatalog.map((service) =>
    service.serviceName === 'Parcels' && service.layers !== undefined
      ? { ...service, layers: service.layers.map((layer) => ({ ...layer, maxRecordCount })) }
      : service,
  );
