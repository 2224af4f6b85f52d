import t from 'tap';
import { runCli } from '../../helpers/cli.js';
import { startEmulator } from '../../helpers/emulator.js';

// Each test spawns geohook processes, which take several times their quiet duration on a loaded two-core machine.
t.setTimeout(2 * 60_000);

t.test('geohook admin placement explain says where pods may run, without a server', async (t) => {
  const dir = t.testdir({
    'policy.json': JSON.stringify({
      placementPolicy: [
        {
          deploymentId: 'buffer',
          deploymentType: 'GPServer',
          podPlacementPolicy: {
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: {
                nodeSelectorTerms: [{ matchExpressions: [{ key: 'workload', operator: 'In', values: ['gis'] }] }],
              },
            },
            tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gis', effect: 'NoSchedule' }],
          },
        },
      ],
    }),
    'nodes.json': JSON.stringify([
      { name: 'gis-1', labels: { workload: 'gis' }, taints: [{ key: 'dedicated', value: 'gis', effect: 'NoSchedule' }] },
      { name: 'web-1', labels: { workload: 'web' } },
    ]),
  });
  const result = await runCli(['admin', 'placement', 'explain', '--file', `${dir}/policy.json`, '--nodes', `${dir}/nodes.json`]);
  t.equal(result.code, 0, result.stderr);
  const verdicts = JSON.parse(result.stdout) as { node: string; schedulable: boolean; reasons: string[] }[];
  t.same(
    verdicts.map((verdict) => [verdict.node, verdict.schedulable]),
    [
      ['gis-1', true],
      ['web-1', false],
    ],
  );
  t.match(verdicts[1]!.reasons.join(' '), /workload/);
});

t.test('geohook admin placement edit takes the policy from --file or inline --policy, and get reads it back', async (t) => {
  const emulator = await startEmulator(t);
  const env = { ADMIN_URL: emulator.baseUrl, ADMIN_USERNAME: 'admin', ADMIN_PASSWORD: 'admin.pass' };
  const policy = {
    placementPolicy: [
      {
        deploymentId: 'b',
        deploymentType: 'GPServer',
        podPlacementPolicy: { nodeAffinity: {}, tolerations: [{ key: 'gpu', operator: 'Exists' }] },
      },
    ],
  };
  const inline = await runCli(['admin', 'placement', 'edit', 'Tools/Buffer.GPServer', '--policy', JSON.stringify(policy)], { env });
  t.equal(inline.code, 0, inline.stderr);
  t.same(JSON.parse((await runCli(['admin', 'placement', 'get', 'Tools/Buffer.GPServer'], { env })).stdout), policy);
  const dir = t.testdir({ 'policy.json': JSON.stringify(policy) });
  t.equal((await runCli(['admin', 'placement', 'edit', 'Hosted/Parcels.FeatureServer', '--file', `${dir}/policy.json`], { env })).code, 0);
  const neither = await runCli(['admin', 'placement', 'edit', 'Tools/Buffer.GPServer'], { env });
  t.equal(neither.stderr, 'geohook: --file or --policy: give exactly one\n');
  const broken = await runCli(['admin', 'placement', 'edit', 'Tools/Buffer.GPServer', '--policy', '{'], { env });
  t.equal(broken.stderr, 'geohook: --policy: not valid JSON\n');
});
