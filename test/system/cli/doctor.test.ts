import t, { type Test } from 'tap';
import type { DoctorReport } from '../../../src/doctor/doctor.js';
import { findFreePort } from '../../../src/embedded/redis-server.js';
import { runCli, type CliResult } from '../../helpers/cli.js';
import { startEmulator, type TestEmulator } from '../../helpers/emulator.js';
import { registrationEnv, startGeohook, type TestGeohook } from '../../helpers/geohook.js';
import { configFile, uniquePrefix } from '../../helpers/receiver.js';
import { startRedis } from '../../helpers/redis.js';
import { waitFor } from '../../helpers/wait.js';

// Each test spawns geohook processes, which take several times their quiet duration on a loaded two-core machine.
t.setTimeout(2 * 60_000);

// `geohook doctor` against the emulator's default catalogue, with a registered `geohook serve` (in process)
// as the receiver whose keys and records it checks.

const redis = await startRedis(t);
const CATALOGUE = [
  'Tools/Buffer.GPServer',
  'Hosted/Parcels.FeatureServer',
  'Hosted/Roads.FeatureServer',
  'Hosted/Zoning.FeatureServer',
  'Tools/Geocode.GPServer',
  'Basemaps/World.MapServer',
];

interface Setup {
  emulator: TestEmulator;
  geohook: TestGeohook;
  /** The environment doctor runs with: the receiver's, as an organization administrator. */
  env: Record<string, string>;
}

/** The emulator and a receiver registered on `register` (Enterprise unless `adminUrl` says otherwise). */
async function setUp(t: Test, register: string[], adminUrl?: (emulator: TestEmulator) => string): Promise<Setup> {
  const emulator = await startEmulator(t);
  const env = {
    ...registrationEnv(emulator, register, uniquePrefix()),
    ...(adminUrl === undefined ? {} : { ADMIN_URL: adminUrl(emulator) }),
    // A registration that fails (a service that cannot take webhooks yet) is tried again within a second.
    GEOHOOK_CONFIG: configFile(t, { registration: { intervalSeconds: 300, retryInitialSeconds: 0.2, retryMaxSeconds: 0.5 } }),
  };
  const geohook = await startGeohook(t, redis, env);
  const doctorEnv = {
    ...env,
    REDIS_URL: redis.url,
    PUBLIC_URL: geohook.url,
    ADMIN_USERNAME: 'orgadmin',
    ADMIN_PASSWORD: 'orgadmin.pass',
  };
  return { emulator, geohook, env: doctorEnv };
}

async function doctor(env: Record<string, string>, services: string[]): Promise<{ result: CliResult; report: DoctorReport }> {
  const result = await runCli(['doctor', '--json', ...services.flatMap((service) => ['--service', service])], { env });
  return { result, report: JSON.parse(result.stdout || '{}') as DoctorReport };
}

/** The checks of `service` that are not ok, by id. */
const problems = (report: DoctorReport, service: string): Record<string, { message: string; fix?: string; severity: string }> =>
  Object.fromEntries(
    (report.services.find((entry) => entry.service === service)?.checks ?? [])
      .filter((check) => !check.ok)
      .map(({ id, message, fix, severity }) => [id, { message, ...(fix === undefined ? {} : { fix }), severity }]),
  );

t.test('the default catalogue: each misconfiguration named with its fix; the fix printed for Roads turns it green', async (t) => {
  const { env } = await setUp(t, ['Tools/Buffer.GPServer', 'Hosted/Parcels.FeatureServer', 'Hosted/Roads.FeatureServer']);
  const { result, report } = await doctor(env, CATALOGUE);
  t.equal(result.code, 1, 'red lines: exit 1');
  t.same(problems(report, 'Tools/Buffer.GPServer'), {}, 'Buffer is green');
  t.same(problems(report, 'Hosted/Parcels.FeatureServer'), {}, 'Parcels is green');
  t.same(Object.keys(problems(report, 'Hosted/Roads.FeatureServer')), ['feature.change-tracking']);
  t.same(Object.keys(problems(report, 'Hosted/Zoning.FeatureServer')), ['feature.branch-versioned']);
  t.same(Object.keys(problems(report, 'Tools/Geocode.GPServer')), ['gp.asynchronous']);
  t.same(Object.keys(problems(report, 'Basemaps/World.MapServer')), ['service.type']);
  t.match(problems(report, 'Tools/Geocode.GPServer')['gp.asynchronous'], { fix: /Asynchronous/ });
  t.match(problems(report, 'Hosted/Zoning.FeatureServer')['feature.branch-versioned'], { fix: /nonversioned/ });
  t.match(report.roundTrip, { ok: true, via: 'signed', recorded: true, status: 202, ackMs: Number });
  const ids = report.services[0]!.checks.map((check) => check.id);
  t.ok(
    ['server.version', 'webhook.signature-key', 'webhook.failures', 'hook-url.https', 'settings.timeout', 'settings.attempts'].every((id) =>
      ids.includes(id),
    ),
    `every check of a registered GP service: ${ids.join(', ')}`,
  );

  // The fix as printed: the command before the admin call it makes.
  const fix = problems(report, 'Hosted/Roads.FeatureServer')['feature.change-tracking']!.fix!;
  const command = /^geohook (admin update-definition .*?) \(POST /.exec(fix)?.[1];
  t.ok(command, fix);
  const applied = await runCli(command!.split(' '), { env });
  t.equal(applied.code, 0, applied.stderr);
  // The receiver's registration, retried, now creates the webhook on Roads.
  const green = await waitFor('Roads green', async () => {
    const after = await doctor(env, ['Hosted/Roads.FeatureServer']);
    return after.result.code === 0 && after;
  });
  t.same(problems(green.report, 'Hosted/Roads.FeatureServer'), {});

  const text = await runCli(['doctor', '--service', 'Hosted/Zoning.FeatureServer'], { env });
  t.match(text.stdout, /^Hosted\/Zoning\.FeatureServer\n/);
  t.match(text.stdout, /\n {2}✗ feature\.branch-versioned: .*\n {6}fix: republish/);
  t.match(text.stdout, /\nround trip: ✗ |\nround trip: not run/);
});

t.test('the round trip fails with a line that says why: the receiver down, or a key it does not hold', async (t) => {
  const { geohook, env, emulator } = await setUp(t, ['Tools/Buffer.GPServer']);
  await waitFor('registered', async () => (await geohook.readyz()).status === 200);
  const [webhook] = (await emulator.admin('services/Tools/Buffer.GPServer/webhooks', { num: '10' })).webhooks as { id: string }[];
  await emulator.admin(`services/Tools/Buffer.GPServer/webhooks/${webhook!.id}/edit`, { signatureKey: 'a-key-geohook-never-made' });
  const wrongKey = await doctor(env, ['Tools/Buffer.GPServer']);
  t.equal(wrongKey.result.code, 1);
  t.match(wrongKey.report.roundTrip, { ok: false, status: 401, message: /refused the signature.*different key/ });
  t.match(problems(wrongKey.report, 'Tools/Buffer.GPServer')['webhook.signature-key'], { message: /does not hold/ });

  // A job whose delivery is refused: the failure's fix blames the key, not the receiver's speed.
  await emulator.control('services/Tools/Buffer.GPServer/jobs', { outcome: 'succeeded' });
  await waitFor('the delivery refused', async () => {
    const { deliveries } = (await (await fetch(`${emulator.url}/emulator/deliveries`)).json()) as { deliveries: { outcome: string }[] };
    return deliveries.some((delivery) => delivery.outcome === 'failed');
  });
  const refused = await doctor(env, ['Tools/Buffer.GPServer']);
  t.match(problems(refused.report, 'Tools/Buffer.GPServer')['webhook.failures'], {
    fix: /^they are refused signatures \(401: see webhook\.signature-key\)/,
  });

  await geohook.stop();
  const down = await doctor(env, ['Tools/Buffer.GPServer']);
  t.equal(down.result.code, 1);
  t.match(down.report.roundTrip, { ok: false, recorded: false, message: /nothing answers at .*ECONNREFUSED.*receiver is down/ });
  t.match(problems(down.report, 'Tools/Buffer.GPServer')['hook-url.answers'], { message: /nothing answers/ });
});

t.test('the same checks against the ArcGIS Online organization, with its test delivery as the round trip', async (t) => {
  const { env } = await setUp(t, ['Parcels.FeatureServer'], (emulator) => `${emulator.url}/geohookOrg/ArcGIS/rest/admin`);
  const online = { ...env, ADMIN_USERNAME: 'admin', ADMIN_PASSWORD: 'admin.pass' };
  const { result, report } = await waitFor('registered on Online', async () => {
    const run = await doctor(online, ['Parcels.FeatureServer', 'Roads.FeatureServer']);
    return run.report.roundTrip !== null && run;
  });
  t.equal(result.code, 1, result.stderr);
  t.same(problems(report, 'Parcels.FeatureServer'), {}, 'Parcels is green');
  t.match(problems(report, 'Roads.FeatureServer'), {
    'feature.change-tracking': { fix: /^geohook admin update-definition Roads\.FeatureServer --capabilities .*ChangeTracking/ },
  });
  t.match(report.roundTrip, { ok: true, via: 'server', recorded: true });
});

t.test(
  'an admin API that cannot be used is exit 2 with one line saying which: unreachable, not an admin root, no token, credentials refused',
  async (t) => {
    const emulator = await startEmulator(t);
    const base = { REDIS_URL: redis.url, REGISTER: 'Tools/Buffer.GPServer' };
    const credentials = { ADMIN_USERNAME: 'admin', ADMIN_PASSWORD: 'admin.pass' };
    const nothing = await findFreePort(); // nothing listens there
    const cases: [string, Record<string, string>, RegExp][] = [
      [
        'credentials refused',
        { ADMIN_URL: emulator.baseUrl, ADMIN_USERNAME: 'admin', ADMIN_PASSWORD: 'wrong' },
        /^geohook: the admin API at \S+ refused the credentials \(.*Invalid username or password.*\): check ADMIN_USERNAME and ADMIN_PASSWORD, or ADMIN_TOKEN\n$/,
      ],
      [
        'unreachable',
        { ADMIN_URL: `http://127.0.0.1:${nothing}/arcgis/admin`, ADMIN_TOKEN: 'x' },
        new RegExp(
          `^geohook: cannot reach the admin API at http://127\\.0\\.0\\.1:${nothing}/arcgis/admin: .*ECONNREFUSED.* \\(check ADMIN_URL and that the server is up\\)\\n$`,
        ),
      ],
      [
        'https against an http server',
        { ADMIN_URL: emulator.baseUrl.replace('http:', 'https:'), ...credentials },
        /^geohook: cannot reach the admin API at https:\S+: .* \(an https ADMIN_URL for an http server, or a certificate this machine does not trust\?\)\n$/,
      ],
      [
        'not an admin root',
        { ADMIN_URL: `${emulator.url}/arcgis`, ...credentials },
        /^geohook: ADMIN_URL http:\S+\/arcgis is not an admin root \(.*code 404.*\): it should be the admin root, ending in \/admin, e\.g\. https:\/\/gis\.example\.com\/arcgis\/admin .*\n$/,
      ],
      [
        'no token',
        { ADMIN_URL: emulator.baseUrl },
        /^geohook: the admin API at \S+ wants a token and got none \(.*code 499.*\): set ADMIN_USERNAME and ADMIN_PASSWORD, or ADMIN_TOKEN; .*\n$/,
      ],
    ];
    for (const [name, env, line] of cases) {
      const result = await runCli(['doctor'], { env: { ...base, ...env } });
      t.equal(result.code, 2, `${name}: exit 2`);
      t.match(result.stderr, line, name);
      t.equal(result.stdout, '', `${name}: nothing on stdout`);
    }
  },
);
