import t from 'tap';
import { startEmulator } from '../helpers/emulator.js';

const policy = {
  placementPolicy: [
    {
      deploymentId: 'buffer-gp',
      deploymentType: 'GPServer',
      podPlacementPolicy: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: 'workload', operator: 'In', values: ['gis'] }] }],
          },
        },
        tolerations: [{ effect: 'NoSchedule', key: 'dedicated', operator: 'Equal', value: 'gis' }],
      },
    },
  ],
};

t.test('a valid placement policy is stored and read back from placementPolicy', async (t) => {
  const emulator = await startEmulator(t);
  t.same(await emulator.admin('services/Tools/Buffer.GPServer/placementPolicy'), { servicePlacementPolicy: { placementPolicy: [] } });
  const edited = await emulator.admin('services/Tools/Buffer.GPServer/placementPolicy/edit', {
    servicePlacementPolicy: JSON.stringify(policy),
    async: 'false',
  });
  t.same(edited, { status: 'success' });
  t.same(await emulator.admin('services/Buffer.GPServer/placementPolicy'), { servicePlacementPolicy: policy });
});

t.test('an empty nodeAffinity is accepted together with tolerations', async (t) => {
  const emulator = await startEmulator(t);
  const entry = {
    ...policy.placementPolicy[0]!,
    podPlacementPolicy: { nodeAffinity: {}, tolerations: [{ key: 'gpu', operator: 'Exists' }] },
  };
  t.same(
    await emulator.admin('services/Parcels.FeatureServer/placementPolicy/edit', {
      servicePlacementPolicy: JSON.stringify({ placementPolicy: [entry] }),
    }),
    { status: 'success' },
  );
});

t.test('an invalid policy is refused with every error, each naming its path and what is allowed', async (t) => {
  const emulator = await startEmulator(t);
  const bad = {
    placementPolicy: [
      {
        deploymentId: 'x',
        deploymentType: 'GPServer',
        podPlacementPolicy: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key: 'k', operator: 'Near', values: ['v'] }] }],
            },
          },
          tolerations: [{ key: 'k', operator: 'Matches' }],
        },
      },
    ],
  };
  const answer = await emulator.admin('services/Buffer.GPServer/placementPolicy/edit', { servicePlacementPolicy: JSON.stringify(bad) });
  t.equal(answer.status, 'error');
  t.equal(answer.code, 400);
  const messages = answer.messages as string[];
  t.equal(messages.length, 2);
  t.match(messages[0], /matchExpressions\[0\]\.operator: must be In, NotIn, Exists or DoesNotExist/);
  t.match(messages[1], /tolerations\[0\]\.operator: must be Exists or Equal/);
});

t.test('a missing, malformed or mistyped policy parameter is a 400 that names it', async (t) => {
  const emulator = await startEmulator(t);
  const edit = (params: Record<string, string>) => emulator.admin('services/Buffer.GPServer/placementPolicy/edit', params);
  t.match(await edit({}), { code: 400, messages: ["Missing required parameter 'servicePlacementPolicy'."] });
  t.match(await edit({ servicePlacementPolicy: '{nope' }), { code: 400, messages: ['servicePlacementPolicy: not valid JSON'] });
  t.match(await edit({ servicePlacementPolicy: JSON.stringify(policy), async: 'sometimes' }), {
    code: 400,
    messages: [/'async': must be true or false/],
  });
  t.match(await emulator.admin('services/Nope.GPServer/placementPolicy/edit', { servicePlacementPolicy: JSON.stringify(policy) }), {
    code: 404,
  });
});
