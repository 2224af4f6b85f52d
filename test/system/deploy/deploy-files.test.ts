import { readdirSync, readFileSync } from 'node:fs';
import t, { type Test } from 'tap';
import { parse, parseAllDocuments } from 'yaml';
import { buildProgram } from '../../../src/cli/program.js';
import { envSchema } from '../../../src/config/schema.js';
import type { Json } from '../../helpers/json.js';
import { repoPath } from '../../helpers/paths.js';

/**
 * No container engine runs here: these tests read the Dockerfile, docker-compose.yml and the Kubernetes
 * manifests and check that every command, option, port, path and variable they use exists in geohook,
 * so that they cannot rot unnoticed.
 */
const read = (path: string): string => readFileSync(repoPath(path), 'utf8');

/** Variables geohook reads: the configuration schema, plus the emulator's users and Node's own. */
const knownVariables = new Set([...Object.keys(envSchema.shape), 'EMULATOR_USERS', 'NODE_ENV']);
const program = await buildProgram();
const DEFAULT_PORT = 8080;
const EMULATOR_PORT = 7080;
const routes = ['/healthz', '/readyz', '/metrics', '/emulator/webhooks'];

/** Checks `args` (a geohook command line without `geohook`) against the CLI's own help. */
function checkCommand(t: Test, where: string, args: readonly string[]): void {
  const [name, ...rest] = args;
  const command = program.commands.find((candidate) => candidate.name() === name);
  if (command === undefined) throw new Error(`${where}: geohook has no command ${name}`);
  const help = command.helpInformation();
  for (const flag of rest.filter((arg) => arg.startsWith('--')))
    t.match(help, new RegExp(`\\s${flag}\\b`), `${where}: geohook ${name} takes ${flag}`);
}

function urlsIn(text: string): URL[] {
  return [...text.matchAll(/https?:\/\/[^'"\s)]+/g)].map((match) => new URL(match[0].replace(/\+.*$/, '')));
}

t.test('Dockerfile: multi-stage, production dependencies only, non-root, healthcheck on /healthz, geohook serve', async (t) => {
  const dockerfile = read('Dockerfile');
  t.equal(dockerfile.match(/^FROM node:20/gm)?.length, 2, 'two stages on Node 20');
  t.match(dockerfile, /npm ci --omit=dev/);
  t.match(dockerfile, /^USER node$/m);
  t.match(dockerfile, new RegExp(`^EXPOSE ${DEFAULT_PORT}$`, 'm'), 'the default PORT');
  t.match(dockerfile, /^HEALTHCHECK .*\n?.*\/healthz/m);
  t.match(dockerfile, /^ENTRYPOINT \["node", "dist\/cli.js"\]$/m);
  const cmd = /^CMD (\[.*\])$/m.exec(dockerfile)?.[1];
  checkCommand(t, 'Dockerfile CMD', JSON.parse(cmd!) as string[]);
  const env = /^ENV (.*)$/m
    .exec(dockerfile)![1]!
    .split(/\s+/)
    .map((pair) => pair.split('=')[0]!);
  for (const name of env) t.ok(knownVariables.has(name), `Dockerfile ENV ${name} is read by geohook`);
  const ignored = read('.dockerignore').split('\n');
  for (const path of ['node_modules', 'dist', '.git', '.geohook', 'test']) t.ok(ignored.includes(path), `.dockerignore leaves out ${path}`);
});

t.test(
  'docker-compose.yml: Redis with AOF and noeviction, and every geohook service wired with existing commands, ports and variables',
  async (t) => {
    const compose = parse(read('docker-compose.yml')) as {
      services: Record<
        string,
        {
          image?: string;
          build?: string;
          command: string[];
          environment?: Record<string, string>;
          ports?: string[];
          healthcheck?: { test: string[] };
        }
      >;
    };
    const redis = compose.services.redis!;
    t.same(
      redis.command.filter((arg) => ['--appendonly', '--maxmemory-policy'].includes(arg) || ['yes', 'noeviction'].includes(arg)),
      ['--appendonly', 'yes', '--maxmemory-policy', 'noeviction'],
    );
    const geohook = Object.entries(compose.services).filter(([, service]) => service.build === '.');
    t.same(geohook.map(([name]) => name).sort(), ['consumer', 'emulator', 'receiver']);
    for (const [name, service] of geohook) {
      checkCommand(t, `compose ${name}`, service.command);
      for (const variable of Object.keys(service.environment ?? {}))
        t.ok(knownVariables.has(variable), `compose ${name}: ${variable} is read by geohook`);
      t.ok(service.healthcheck, `compose ${name} has a healthcheck`);
      for (const url of urlsIn(service.healthcheck!.test.join(' ')))
        t.ok(routes.includes(url.pathname), `compose ${name}: healthcheck path ${url.pathname} is served`);
    }
    const receiver = compose.services.receiver!;
    t.same(receiver.ports, [`${DEFAULT_PORT}:${receiver.environment!.PORT}`]);
    t.equal(Number(receiver.environment!.PORT), DEFAULT_PORT);
    t.match(receiver.environment!.REDIS_URL, /^redis:\/\/redis:6379$/);
    t.match(
      receiver.environment!.ADMIN_URL,
      new RegExp(`http://emulator:${EMULATOR_PORT}/arcgis/admin`),
      'registration goes to the emulator by default',
    );
    const emulator = compose.services.emulator!;
    t.same(emulator.ports, [`${EMULATOR_PORT}:${emulator.command[emulator.command.indexOf('--port') + 1]}`]);
    const consumer = compose.services.consumer!;
    const metricsPort = consumer.command[consumer.command.indexOf('--metrics-port') + 1];
    t.match(consumer.healthcheck!.test.join(' '), `127.0.0.1:${metricsPort}/metrics`, 'the consumer healthcheck reads its metrics port');
  },
);

t.test('deploy/kubernetes: Deployment, Service, Secret and PodDisruptionBudget agree with each other and with geohook', async (t) => {
  const dir = repoPath('deploy', 'kubernetes');
  const documents = readdirSync(dir)
    .filter((name) => name.endsWith('.yaml'))
    .flatMap((name) => parseAllDocuments(read(`deploy/kubernetes/${name}`)).map((document) => document.toJS() as Json));
  const byKind = new Map(documents.map((document) => [document.kind as string, document]));
  t.same([...byKind.keys()].sort(), ['Deployment', 'PodDisruptionBudget', 'Secret', 'Service']);

  const deployment = byKind.get('Deployment')!;
  t.ok(deployment.spec.replicas >= 2, 'at least two replicas');
  const labels = deployment.spec.template.metadata.labels as Record<string, string>;
  t.same(deployment.spec.selector.matchLabels, labels, 'the selector picks the pods');
  const pod = deployment.spec.template.spec;
  const container = pod.containers[0];
  t.same(container.args, ['serve']);
  checkCommand(t, 'Deployment args', container.args);
  const port = container.ports.find((p: { name: string }) => p.name === 'http');
  t.equal(port.containerPort, DEFAULT_PORT);
  const env = new Map<string, { value?: string; valueFrom?: { secretKeyRef: { name: string; key: string } } }>(
    container.env.map((variable: { name: string }) => [variable.name, variable]),
  );
  for (const name of env.keys()) t.ok(knownVariables.has(name), `Deployment: ${name} is read by geohook`);
  t.equal(Number(env.get('PORT')!.value), DEFAULT_PORT);
  t.same([container.readinessProbe.httpGet.path, container.livenessProbe.httpGet.path], ['/readyz', '/healthz']);
  t.equal(container.readinessProbe.httpGet.port, 'http');
  t.ok(container.resources.requests.cpu && container.resources.limits.memory, 'resources');
  t.match(pod.securityContext, { runAsNonRoot: true });
  t.match(container.securityContext, { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
  // A stop: preStop, in-flight requests (Fastify's request timeout), closing (5 s to spare).
  const preStop = Number(container.lifecycle.preStop.exec.command[1]);
  t.ok(pod.terminationGracePeriodSeconds > preStop + 5 + 10, 'the grace period is longer than the drain');

  const secret = byKind.get('Secret')!;
  for (const [name, variable] of env) {
    const ref = variable.valueFrom?.secretKeyRef;
    if (ref === undefined) continue;
    t.equal(ref.name, secret.metadata.name, `${name} comes from the Secret`);
    t.ok(ref.key in secret.stringData, `the Secret has ${ref.key}`);
  }
  t.ok('HOOK_SECRETS' in secret.stringData, 'the signature keys are in the Secret');

  const service = byKind.get('Service')!;
  t.same(service.spec.selector, labels);
  t.equal(service.spec.ports[0].targetPort, 'http');
  const pdb = byKind.get('PodDisruptionBudget')!;
  t.same(pdb.spec.selector.matchLabels, labels);
  t.ok(pdb.spec.minAvailable >= 1 && pdb.spec.minAvailable < deployment.spec.replicas, 'a drain keeps a receiver up and can still proceed');
});
