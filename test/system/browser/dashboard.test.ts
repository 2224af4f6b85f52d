import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { BrowserContext, Page } from 'playwright-core';
import t, { type Test } from 'tap';
import { serverGensKey, upstreamFailuresKey, upstreamKey } from '../../../src/redis/keys.js';
import { sign } from '../../../src/signature/sign.js';
import { chromiumMissing, launchChromium } from '../../helpers/chromium.js';
import { startSink } from '../../helpers/http-sink.js';
import { fixture, repoPath } from '../../helpers/paths.js';
import { configFile, startReceiver, TEST_KEY, type TestReceiver } from '../../helpers/receiver.js';
import { startRedis } from '../../helpers/redis.js';
import { waitFor } from '../../helpers/wait.js';

const TOKEN = 'dashboard-token-0123456789';
const SCREENSHOT = repoPath('test-artifacts', 'dashboard.png');
const SERVICES_SCREENSHOT = repoPath('test-artifacts', 'services.png');
const skip = chromiumMissing();

/**
 * A page that never reaches out to the internet (the board links Google Fonts), and the board requests it
 * saw fail. Each step may take 15 s: the suite runs beside CPU-heavy tests (the bench smoke run), and the
 * board's modal closing after a retry once took over 5 s there.
 */
async function openPage(context: BrowserContext): Promise<{ page: Page; failures: string[] }> {
  context.setDefaultTimeout(15_000);
  const page = await context.newPage();
  const failures: string[] = [];
  // Nothing may be fetched from outside: geohook runs offline.
  await page.route(/^https?:\/\/(?!127\.0\.0\.1)/, async (route) => {
    failures.push(`outside: ${route.request().url()}`);
    await route.abort();
  });
  page.on('response', (response) => {
    if (response.status() >= 400) failures.push(`${response.status()} ${response.request().method()} ${response.url()}`);
  });
  return { page, failures };
}

/** Posts the GP fixture through the webhook route; resolves to the id of its job. */
async function enqueueEvent(t: Test, receiver: TestReceiver): Promise<string> {
  const body = fixture('enterprise-gp-succeeded.json');
  t.equal((await receiver.post(body, { 'x-service': sign(TEST_KEY, body) })).status, 202);
  // The 202 means the event is a job.
  const [job] = await receiver.app.eventQueue.queue('gp-events').getJobs(['wait']);
  t.ok(job?.id, 'the event waits as a job');
  return job!.id!;
}

/** Runs a worker whose processor throws until it has failed one job (one attempt: `retry.attempts` is 1). */
async function failNextJob(redisUrl: string, prefix: string): Promise<void> {
  const worker = new Worker(
    'gp-events',
    async () => {
      throw new Error('consumer broke');
    },
    { connection: { url: redisUrl }, prefix },
  );
  await new Promise((resolve) => worker.once('failed', resolve));
  await worker.close();
}

t.test('token mode: log in, see the event, retry its failed job from the Failed tab', { skip }, async (t) => {
  const redis = await startRedis(t);
  const receiver = await startReceiver(t, redis, {
    GEOHOOK_CONFIG: configFile(t, { dashboard: { token: TOKEN }, retry: { attempts: 1 } }),
  });
  const queue = receiver.app.eventQueue.queue('gp-events');
  const jobId = await enqueueEvent(t, receiver);
  const browser = await launchChromium(t);
  const { page, failures } = await openPage(await browser.newContext());

  await page.goto(`${receiver.url}/ui/queue/gp-events?status=waiting`);
  t.equal(new URL(page.url()).pathname, '/ui/login', 'an anonymous visit lands on the login page');
  await page.fill('#token', TOKEN);
  await page.click('button[type=submit]');
  await page.waitForURL(`${receiver.url}/ui/services`);
  await page.goto(`${receiver.url}/ui/queue/gp-events?status=waiting`);
  await page.getByRole('link', { name: jobId }).waitFor();
  await page
    .getByText(`gp.job.succeeded · Tools/Buffer.GPServer · ${jobId.slice(0, 12)} · job j5c4a2f2a9b0e4d8f9a1b2c3d4e5f6a7b`, { exact: true })
    .waitFor();
  t.pass('the enqueued event is on the board: its job id, and a readable title (type, service, short id, GP job id)');

  await failNextJob(redis.url, receiver.prefix);
  await page.getByRole('link', { name: 'FAILED', exact: true }).click();
  await page.waitForURL(/status=failed/);
  const jobHeader = page.getByRole('link', { name: jobId }).locator('xpath=ancestor::div[2]');
  const retryButton = jobHeader.getByRole('button').first();
  await retryButton.hover();
  await page.getByText('Retry', { exact: true }).waitFor();
  await retryButton.click();
  const retried = page.waitForResponse((response) => response.request().method() === 'PUT' && response.url().endsWith(`/${jobId}/retry`));
  await page.getByRole('button', { name: 'Confirm', exact: true }).click();
  t.equal((await retried).status(), 204, 'the board called the retry API');
  t.equal(await queue.getJobState(jobId), 'waiting', 'Redis has the job out of the failed state');

  // By its URL rather than the tab: under load the tab was once not found for 15 s after the retry (the
  // confirmation dialog hides the rest of the page from its roles while it is open).
  await page.goto(`${receiver.url}/ui/queue/gp-events?status=waiting`);
  await page.getByRole('link', { name: jobId }).waitFor();
  mkdirSync(dirname(SCREENSHOT), { recursive: true });
  await page.screenshot({ path: SCREENSHOT, fullPage: true });
  t.same(failures, [], 'every page, asset and API request of the board succeeded');
});

t.test('basic mode: the browser opens the board with HTTP basic credentials, and not without', { skip }, async (t) => {
  const redis = await startRedis(t);
  const credentials = { username: 'ops', password: 'correct-horse-battery' };
  const receiver = await startReceiver(t, redis, { GEOHOOK_CONFIG: configFile(t, { dashboard: credentials }) });
  const browser = await launchChromium(t);

  const { page, failures } = await openPage(await browser.newContext({ httpCredentials: credentials }));
  await page.goto(`${receiver.url}/ui/`);
  for (const name of ['gp-events', 'feature-events', 'unknown-events'])
    await page.getByRole('navigation').getByRole('link', { name }).waitFor();
  t.pass('the board lists the three queues');
  t.same(failures, [], 'every page, asset and API request of the board succeeded');

  const anonymous = await (await browser.newContext()).newPage();
  // Headless Chromium cannot prompt: a Basic challenge it has no answer to fails the navigation.
  await t.rejects(anonymous.goto(`${receiver.url}/ui/`), /ERR_INVALID_AUTH_CREDENTIALS/, 'no credentials: challenged');
  const wrong = await (await browser.newContext({ httpCredentials: { ...credentials, password: 'wrong-password-123' } })).newPage();
  const refused = await wrong.goto(`${receiver.url}/ui/`);
  t.equal(refused?.status(), 401, 'wrong password: 401');
  t.match(await refused?.json(), { code: 'GEOHOOK_ERR_DASHBOARD_AUTH' });
});

t.test('services view: the board links to it, and it shows each service as Redis has it', { skip }, async (t) => {
  const redis = await startRedis(t);
  const credentials = { username: 'ops', password: 'correct-horse-battery' };
  const receiver = await startReceiver(t, redis, {
    GEOHOOK_CONFIG: configFile(t, { dashboard: credentials }),
    TRUSTED_ORIGINS: 'https://server.com',
  });
  const raw = new Redis(redis.url);
  t.teardown(() => raw.disconnect());
  // The fixture's server, at the generation of its delivery: the range counts at once.
  const serviceUrl = 'https://server.com/server/rest/services/ServiceName/FeatureServer';
  await raw.hset(serverGensKey(receiver.prefix), 'default ServiceName.FeatureServer', `1730385704443\t${serviceUrl}`);
  for (const name of ['enterprise-gp-succeeded.json', 'enterprise-feature-created.json']) {
    const body = fixture(name);
    t.equal((await receiver.post(body, { 'x-service': sign(TEST_KEY, body) })).status, 202, name);
  }
  // What a registration pass records of a webhook the server deactivated once, and a failure it reported.
  const now = Date.now();
  const parcels = 'Hosted/Parcels.FeatureServer';
  await raw.hset(
    upstreamKey(receiver.prefix),
    parcels,
    JSON.stringify({ webhookId: 'w1', active: true, deactivations: 1, checkedAt: now }),
  );
  await raw.zadd(upstreamFailuresKey(receiver.prefix, parcels), now - 60_000, String(now - 60_000));
  // A service an earlier run registered: no pass has checked its webhook for a day.
  const checkedAt = now - 86_400_000;
  await raw.hset(
    upstreamKey(receiver.prefix),
    'Hosted/Stale.FeatureServer',
    JSON.stringify({ webhookId: 'w0', active: true, deactivations: 0, checkedAt, product: 'online' }),
  );
  const browser = await launchChromium(t);
  const { page, failures } = await openPage(await browser.newContext({ httpCredentials: credentials }));

  await page.goto(`${receiver.url}/ui/`);
  // Bull Board puts its links in the menu at the right of its header.
  await page.locator('header button[aria-haspopup]').last().click();
  await page.getByText('Services', { exact: true }).click();
  await page.waitForURL(`${receiver.url}/ui/services`);
  await page.getByRole('heading', { name: 'Services' }).waitFor();
  const cells = async (service: string): Promise<Record<string, string>> => {
    const row = page.locator(`tr[data-service="${service}"] td`);
    const entries = await row.evaluateAll((tds) => tds.map((td) => [td.getAttribute('data-column'), td.textContent]));
    return Object.fromEntries(entries) as Record<string, string>;
  };
  t.match(await cells(parcels), { mode: 'webhook', webhook: 'active, deactivated 1×', failures24h: '1', lastDelivery: '' });
  t.match(await cells('Tools/Buffer.GPServer'), { mode: 'webhook', webhook: '', lastDelivery: /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/ });
  t.match(await cells('ServiceName.FeatureServer'), {
    watermark: /^1730385704443 \(2024-10-31 \d\d:\d\d:\d\d\)$/,
    lastDelivery: /^\d{4}-/,
  });
  t.equal(await page.locator('#services tbody tr').count(), 4, 'one row per service');
  t.match(
    await cells('Hosted/Stale.FeatureServer'),
    { service: 'Hosted/Stale.FeatureServer ArcGIS Online', webhook: /^stale: not checked since \d{4}-/ },
    "an earlier run's service is stale; each registered service says its product",
  );

  // The recent events, newest first, and those of one service through its link.
  t.equal(await page.locator('#events tbody tr').count(), 2, 'both events are listed');
  await page.locator('#services').getByRole('link', { name: 'Tools/Buffer.GPServer' }).click();
  await page.waitForURL(/services\?service=Tools%2FBuffer\.GPServer$/);
  const listed = await page.locator('#events tbody tr td:nth-child(2)').allTextContents();
  t.same(listed, ['gp.job.succeeded'], 'filtered by service');
  mkdirSync(dirname(SERVICES_SCREENSHOT), { recursive: true });
  await page.screenshot({ path: SERVICES_SCREENSHOT, fullPage: true });
  t.same(failures, [], 'every request succeeded');

  const anonymous = await fetch(`${receiver.url}/ui/services`);
  t.equal(anonymous.status, 401, 'behind the dashboard credentials');
});

t.test('a signed-in board cannot be framed by a page of the same site (another port of 127.0.0.1)', { skip }, async (t) => {
  const redis = await startRedis(t);
  const receiver = await startReceiver(t, redis, { DASHBOARD_TOKEN: TOKEN });
  const framed = ['/ui/queue/gp-events', '/ui/services', '/ui/login'];
  const attacker = await startSink(t, (_request, response) =>
    response
      .writeHead(200, { 'content-type': 'text/html' })
      .end(framed.map((path) => `<iframe src="${receiver.url}${path}" width="600" height="400"></iframe>`).join('')),
  );
  const browser = await launchChromium(t);
  const { page } = await openPage(await browser.newContext());
  await page.goto(`${receiver.url}/ui/login?token=${TOKEN}`);
  await page.waitForURL(`${receiver.url}/ui/services`);
  t.equal(await page.title(), 'geohook · services', 'signed in: the services page opens at the top level');

  // The frames have loaded (or been refused) once the network is quiet.
  await page.goto(attacker.url, { waitUntil: 'networkidle' });
  const frames = page.frames().filter((frame) => frame !== page.mainFrame());
  t.equal(frames.length, framed.length, 'the attacker page holds its frames');
  // Each frame's origin once its document is complete: a frame the browser refused holds its error page,
  // whose origin is opaque ("null"), so there is no board of the receiver to click.
  const origins = await waitFor('every frame to settle', async () => {
    const settled = await Promise.all(
      frames.map((frame) => frame.evaluate<string | null>("document.readyState === 'complete' ? window.origin : null").catch(() => null)),
    );
    return settled.every((origin) => origin !== null) ? settled : undefined;
  });
  t.same(origins, ['null', 'null', 'null'], `no frame holds a document of ${receiver.url}`);
});
