import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { Page } from 'playwright-core';
import t from 'tap';
import { MENU_LABEL } from '../../../src/dashboard/dashboard.js';
import {
  changesFailedKey,
  changesPendingKey,
  changesResolvedKey,
  relayStatsKey,
  serverGensKey,
  upstreamFailuresKey,
  upstreamKey,
  watermarksKey,
} from '../../../src/redis/keys.js';
import { sign } from '../../../src/signature/sign.js';
import { SubscriptionRegistry } from '../../../src/subscriptions/subscription-registry.js';
import { chromiumMissing, launchChromium } from '../../helpers/chromium.js';
import { fixture } from '../../helpers/paths.js';
import { configFile, startReceiver, TEST_KEY } from '../../helpers/receiver.js';
import { startRedis } from '../../helpers/redis.js';
import { changeUpdated, SECRET_A } from '../../helpers/relay-events.js';

const TOKEN = 'dashboard-token-0123456789';
const skip = chromiumMissing();

/** What sticks out of the window: the page's own width past it, and the elements whose right edge is beyond it. */
async function overflow(page: Page): Promise<{ scrollWidth: number; width: number; cut: string[] }> {
  // A string: the function runs in the page, whose DOM the tests' TypeScript does not know.
  return page.evaluate(`(() => {
    const width = document.documentElement.clientWidth;
    const cut = [...document.body.querySelectorAll('*')]
      .filter((element) => element.getBoundingClientRect().right > width + 0.5)
      .map((element) => element.tagName.toLowerCase() + (element.id === '' ? '' : '#' + element.id) + ': ' + (element.textContent ?? '').slice(0, 40));
    return { scrollWidth: document.documentElement.scrollWidth, width, cut: cut.slice(0, 5) };
  })()`);
}

t.test(
  "issue 53: every page of the dashboard's own fits a 1280 px and a 1024 px window, and the board's header icons have names",
  { skip },
  async (t) => {
    const redis = await startRedis(t);
    const route = { name: 'parcels-to-permits-office', url: 'http://127.0.0.1:9/in', types: ['change.*'], secret: SECRET_A };
    const receiver = await startReceiver(t, redis, {
      DASHBOARD_TOKEN: TOKEN,
      ADMIN_URL: 'http://127.0.0.1:9/arcgis/admin',
      CHANGES: 'Hosted/Parcels.FeatureServer',
      TRUSTED_ORIGINS: 'https://server.com',
      GEOHOOK_CONFIG: configFile(t, { relays: [route] }),
    });
    const { prefix } = receiver;
    const raw = new Redis(redis.url, { maxRetriesPerRequest: null });
    t.teardown(() => raw.disconnect());

    // Each page as full as a working receiver makes it: long service names, times, errors and commands.
    const now = Date.now();
    const generation = String(now - 5000);
    const parcels = 'Hosted/Parcels_And_Inspections_Authoritative.FeatureServer';
    const scope = `default ${parcels}`;
    await raw.hset(serverGensKey(prefix), scope, `${generation}\thttps://server.com/server/rest/services/x/FeatureServer`);
    await raw.hset(watermarksKey(prefix), scope, generation);
    await raw.hset(changesResolvedKey(prefix), scope, generation);
    await raw.hset(changesPendingKey(prefix), scope, `${generation}\t${now}\t${now}`);
    await raw.hset(
      changesFailedKey(prefix),
      scope,
      JSON.stringify({
        from: generation,
        to: now,
        error:
          'GEOHOOK_ERR_ADMIN_API: extractChanges answered 500 (Unable to complete operation.) at https://server.com/server/rest/services/x/FeatureServer/extractChanges',
        at: new Date(now).toISOString(),
      }),
    );
    await raw.hset(
      upstreamKey(prefix),
      parcels,
      JSON.stringify({
        webhookId: 'w1',
        active: true,
        deactivations: 2,
        checkedAt: now,
        product: 'enterprise',
        cause: { at: now, text: "its signature key was not the receiver's (its deliveries were refused, 401): set to the receiver's" },
        checkError: { at: now, text: 'GEOHOOK_ERR_ADMIN_API: the admin API answered 500 to notificationStatus' },
      }),
    );
    await raw.zadd(upstreamFailuresKey(prefix, parcels), now - 60_000, String(now - 60_000));
    for (const name of ['enterprise-gp-succeeded.json', 'enterprise-feature-created.json']) {
      const body = fixture(name);
      t.equal((await receiver.post(body, { 'x-service': sign(TEST_KEY, body) })).status, 202, name);
    }
    await raw.hset(relayStatsKey(prefix, route.name), {
      delivered: 1204,
      failing: 3,
      lastError: 'could not reach the route: connect ECONNREFUSED 127.0.0.1:9 (after 3 tries, the last at 10:00:00)',
      lastErrorAt: new Date(now).toISOString(),
      lastDeliveredAt: new Date(now).toISOString(),
    });
    const relayQueue = new Queue(`relay-${route.name}`, { connection: raw, prefix });
    const event = changeUpdated({ id: 'a'.repeat(64) });
    await relayQueue.add(event.type, event, { jobId: event.id, delay: 3_600_000 });
    await relayQueue.close();
    const registry = new SubscriptionRegistry(raw, prefix);
    await registry.create({ name: 'permits-office-closed-parcels', types: ['change.*', 'gp.*', 'feature.*'] }, { origin: 'runtime' });

    const browser = await launchChromium(t);
    const pages = [
      '/ui/login',
      '/ui/services',
      `/ui/services?service=${encodeURIComponent('Tools/Buffer.GPServer')}`,
      '/ui/changes',
      '/ui/relays',
      `/ui/relays/${route.name}/dry-run`,
      `/ui/relays/${route.name}/dry-run?id=${event.id}`,
      '/ui/subscriptions',
    ];
    for (const width of [1280, 1024]) {
      const context = await browser.newContext({ viewport: { width, height: 800 } });
      context.setDefaultTimeout(15_000);
      const page = await context.newPage();
      await page.goto(`${receiver.url}/ui/login?token=${TOKEN}`);
      await page.waitForURL(`${receiver.url}/ui/services`);
      for (const path of pages) {
        const response = await page.goto(`${receiver.url}${path}`);
        t.equal(response?.status(), 200, `${path} opens`);
        t.same(await overflow(page), { scrollWidth: width, width, cut: [] }, `${path} fits ${width} px: no horizontal scroll, nothing cut`);
      }

      // Bull Board's header: the icon that opens the menu of geohook's pages says what it is.
      await page.goto(`${receiver.url}/ui/`);
      await page.getByRole('button', { name: MENU_LABEL, exact: true }).waitFor();
      t.same(
        await page.evaluate(`[...document.querySelectorAll('header button, header a')]
          .filter((element) => (element.getAttribute('aria-label') ?? element.textContent ?? '').trim() === '')
          .map((element) => element.outerHTML.slice(0, 80))`),
        [],
        `${width} px: every icon of the board's header has a name`,
      );
      t.same(
        await page.evaluate(
          `[...document.querySelectorAll('header ul button, header ul a')].map((element) => element.getAttribute('aria-label'))`,
        ),
        ['Redis details', 'Docs', 'Full screen', 'Settings', MENU_LABEL],
        `${width} px: the names in the order Bull Board draws its icons (Redis, its Docs link, full screen, settings, the menu)`,
      );
      const menu = page.getByRole('button', { name: MENU_LABEL, exact: true });
      await menu.click();
      await page.getByText('Services', { exact: true }).click();
      await page.waitForURL(`${receiver.url}/ui/services`);
      t.pass(`${width} px: the labelled menu icon leads to the services page`);
      await context.close();
    }
  },
);
