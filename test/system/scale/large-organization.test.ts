import t from 'tap';
import type { DoctorReport } from '../../../src/doctor/doctor.js';
import type { CatalogService } from '../../../src/emulator/types.js';
import { runCli } from '../../helpers/cli.js';
import { startEmulator } from '../../helpers/emulator.js';
import { startGeohook } from '../../helpers/geohook.js';
import { configFile, uniquePrefix } from '../../helpers/receiver.js';
import { startRedis } from '../../helpers/redis.js';
import { waitFor } from '../../helpers/wait.js';

// 5,000 services from a pattern in the configuration file, one of them missing: the others are registered, the
// receiver is ready, and /readyz, the metrics and doctor name the missing one. Geoprocessing services, so that the
// test times registration alone: a feature service's pass also reads its generations (the bench's scale section
// registers 1,000 of those).

t.setTimeout(4 * 60_000);
const redis = await startRedis(t);
const COUNT = 5000;
const MISSING = 'Scale/Missing.GPServer';

t.test(
  `${COUNT} services from a pattern in the config file: one missing leaves the others registered and the receiver ready`,
  async (t) => {
    const catalog: CatalogService[] = Array.from({ length: COUNT - 1 }, (_, index) => ({
      folderName: 'Scale',
      serviceName: `Svc${String(index).padStart(4, '0')}`,
      type: 'GPServer',
      asynchronous: true,
    }));
    const emulator = await startEmulator(t, { catalog });
    const env = {
      ADMIN_URL: emulator.baseUrl,
      ADMIN_USERNAME: 'admin',
      ADMIN_PASSWORD: 'admin.pass',
      HOOK_SECRETS: 'a-large-organization-key',
      GEOHOOK_PREFIX: uniquePrefix(),
      DASHBOARD_TOKEN: 'a-large-organization-dashboard',
      GEOHOOK_CONFIG: configFile(t, { register: ['Scale/*', MISSING], registration: { retryInitialSeconds: 0.2, retryMaxSeconds: 1 } }),
    };
    const geohook = await startGeohook(t, redis, { ...env, LOG_LEVEL: 'info' });
    await waitFor('readiness', async () => (await geohook.readyz()).status === 200, { timeoutMs: 3 * 60_000, intervalMs: 200 });

    const readyz = (await (await fetch(`${geohook.url}/readyz`)).json()) as { status: string; registration: Record<string, unknown> };
    t.equal(readyz.status, 'ready');
    t.match(readyz.registration, {
      services: COUNT,
      registered: COUNT - 1,
      failingCount: 1,
      failing: [{ service: MISSING, reason: `service ${MISSING} not found on the GIS server` }],
    });
    const webhooks = (await (await fetch(`${emulator.url}/emulator/webhooks`)).json()) as {
      webhooks: { serviceName: string; active: boolean }[];
    };
    t.equal(webhooks.webhooks.length, COUNT - 1, 'one webhook per service that exists');
    t.ok(webhooks.webhooks.every((webhook) => webhook.active));
    t.equal(new Set(webhooks.webhooks.map((webhook) => webhook.serviceName)).size, COUNT - 1, 'no service twice');
    const metrics = await (await fetch(`${geohook.url}/metrics`)).text();
    t.match(metrics, /geohook_registration_services\{state="registered"\} 4999/);
    t.match(metrics, /geohook_registration_failing\{service="Scale\/Missing.GPServer"\} 1/);

    const doctor = await runCli(['doctor', '--json'], {
      env: { ...env, REDIS_URL: redis.url, PUBLIC_URL: geohook.url, ADMIN_USERNAME: 'orgadmin', ADMIN_PASSWORD: 'orgadmin.pass' },
    });
    const report = JSON.parse(doctor.stdout) as DoctorReport;
    t.equal(report.total, COUNT, 'doctor resolves the pattern against the catalogue');
    const missing = report.services.find(({ service }) => service === MISSING);
    t.match(
      missing?.checks.find((check) => !check.ok),
      { id: 'service.exists', message: `${MISSING} is not on the GIS server` },
    );
    t.ok(report.services.length <= 11, `doctor checks a handful one by one, not every service (${report.services.length})`);
    t.equal(report.roundTrip?.ok, true, 'and its round trip goes through a registered one');
    t.equal(doctor.code, 1, 'doctor exits 1 on the missing service');
  },
);
