import t from 'tap';
import { explainPlacement, PREFER_NO_SCHEDULE_PENALTY, type PlacementNode, type NodeVerdict } from '../../src/arcgis/explain-placement.js';
import type {
  MatchExpression,
  NodeAffinity,
  PlacementPolicyEntry,
  Toleration,
  WeightedPreference,
} from '../../src/arcgis/placement-policy.js';

/** A GPServer policy entry with the given affinity and tolerations. */
function entry(nodeAffinity: NodeAffinity, tolerations: Toleration[] = []): PlacementPolicyEntry {
  return { deploymentId: 'd1', deploymentType: 'GPServer', podPlacementPolicy: { nodeAffinity, tolerations } };
}

/** An entry whose required affinity has one term per argument, each term ANDing its expressions. */
function requiring(...terms: MatchExpression[][]): PlacementPolicyEntry {
  const nodeSelectorTerms = terms.map((matchExpressions) => ({ matchExpressions }));
  return entry({ requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms } });
}

/** An entry with no affinity, tolerating as given. */
function tolerating(...tolerations: Toleration[]): PlacementPolicyEntry {
  return entry({}, tolerations);
}

/** The verdict for a single node. */
function verdictOf(policy: PlacementPolicyEntry, node: PlacementNode): Omit<NodeVerdict, 'node'> {
  const [verdict] = explainPlacement(policy, [node]);
  if (verdict === undefined) throw new Error('no verdict');
  const { node: _name, ...rest } = verdict;
  return rest;
}

const SSD: MatchExpression = { key: 'disktype', operator: 'In', values: ['ssd'] };
const DEDICATED_GIS = { key: 'dedicated', value: 'gis', effect: 'NoSchedule' } as const;

t.test('required In matches a listed label value and refuses another or a missing label', async (t) => {
  const policy = requiring([SSD]);
  t.strictSame(verdictOf(policy, { name: 'n1', labels: { disktype: 'ssd' } }), {
    schedulable: true,
    score: 0,
    reasons: ['required term 1 (disktype in [ssd]) matches'],
  });
  t.strictSame(verdictOf(policy, { name: 'n2', labels: { disktype: 'hdd' } }), {
    schedulable: false,
    score: 0,
    reasons: ['required term 1 (disktype in [ssd]) does not match: label disktype is "hdd", not in [ssd]'],
  });
  t.strictSame(verdictOf(policy, { name: 'n3' }).reasons, [
    'required term 1 (disktype in [ssd]) does not match: label disktype is absent, not in [ssd]',
  ]);
});

t.test('required NotIn matches an absent label or an unlisted value', async (t) => {
  const policy = requiring([{ key: 'zone', operator: 'NotIn', values: ['east', 'west'] }]);
  t.equal(verdictOf(policy, { name: 'n1' }).schedulable, true);
  t.equal(verdictOf(policy, { name: 'n2', labels: { zone: 'north' } }).schedulable, true);
  t.strictSame(verdictOf(policy, { name: 'n3', labels: { zone: 'west' } }), {
    schedulable: false,
    score: 0,
    reasons: ['required term 1 (zone not in [east, west]) does not match: label zone is "west", in excluded [east, west]'],
  });
});

t.test('required Exists and DoesNotExist look only at the presence of the label', async (t) => {
  const gpu = requiring([{ key: 'gpu', operator: 'Exists' }]);
  t.equal(verdictOf(gpu, { name: 'n1', labels: { gpu: '' } }).schedulable, true);
  t.strictSame(verdictOf(gpu, { name: 'n2', labels: { constructor: 'x' } }).reasons, [
    'required term 1 (gpu exists) does not match: label gpu is absent, must exist',
  ]);
  const noSpot = requiring([{ key: 'spot', operator: 'DoesNotExist' }]);
  t.equal(verdictOf(noSpot, { name: 'n3', labels: { gpu: 'true' } }).schedulable, true);
  t.strictSame(verdictOf(noSpot, { name: 'n4', labels: { spot: 'true' } }).reasons, [
    'required term 1 (spot does not exist) does not match: label spot is "true", must not exist',
  ]);
});

t.test('a node must match at least one required term and the first match is reported', async (t) => {
  const policy = requiring([SSD], [{ key: 'disktype', operator: 'In', values: ['nvme'] }]);
  t.strictSame(verdictOf(policy, { name: 'n1', labels: { disktype: 'nvme' } }), {
    schedulable: true,
    score: 0,
    reasons: ['required term 2 (disktype in [nvme]) matches'],
  });
  t.strictSame(verdictOf(policy, { name: 'n2', labels: { disktype: 'hdd' } }), {
    schedulable: false,
    score: 0,
    reasons: [
      'required term 1 (disktype in [ssd]) does not match: label disktype is "hdd", not in [ssd]',
      'required term 2 (disktype in [nvme]) does not match: label disktype is "hdd", not in [nvme]',
    ],
  });
});

t.test('a required term matches only when all its expressions match, and every failure is named', async (t) => {
  const policy = requiring([SSD, { key: 'gpu', operator: 'Exists' }]);
  t.equal(verdictOf(policy, { name: 'n1', labels: { disktype: 'ssd', gpu: 'a100' } }).schedulable, true);
  t.strictSame(verdictOf(policy, { name: 'n2', labels: { disktype: 'ssd' } }).reasons, [
    'required term 1 (disktype in [ssd] and gpu exists) does not match: label gpu is absent, must exist',
  ]);
  t.strictSame(verdictOf(policy, { name: 'n3', labels: { disktype: 'hdd' } }).reasons, [
    'required term 1 (disktype in [ssd] and gpu exists) does not match: label disktype is "hdd", not in [ssd]; ' +
      'label gpu is absent, must exist',
  ]);
});

t.test('an empty required selector or term matches no node', async (t) => {
  t.strictSame(verdictOf(requiring(), { name: 'n1' }), {
    schedulable: false,
    score: 0,
    reasons: ['required node affinity has no terms: no node matches'],
  });
  t.strictSame(verdictOf(requiring([]), { name: 'n1' }).reasons, ['required term 1 () does not match: it has no match expressions']);
});

t.test('a NoSchedule taint repels a pod without a matching toleration', async (t) => {
  const node: PlacementNode = { name: 'n1', taints: [DEDICATED_GIS] };
  t.strictSame(verdictOf(tolerating(), node), {
    schedulable: false,
    score: 0,
    reasons: ['taint dedicated=gis:NoSchedule is not tolerated'],
  });
  const equal = tolerating({ key: 'dedicated', operator: 'Equal', value: 'gis', effect: 'NoSchedule' });
  t.strictSame(verdictOf(equal, node), {
    schedulable: true,
    score: 0,
    reasons: ['taint dedicated=gis:NoSchedule is tolerated'],
  });
  t.equal(verdictOf(tolerating({ key: 'dedicated', operator: 'Exists' }), node).schedulable, true, 'key only');
});

t.test('a NoExecute taint repels like NoSchedule and a valueless taint is written key:effect', async (t) => {
  t.strictSame(verdictOf(tolerating(), { name: 'n1', taints: [{ key: 'maintenance', effect: 'NoExecute' }] }).reasons, [
    'taint maintenance:NoExecute is not tolerated',
  ]);
});

t.test('an Exists toleration with an empty key tolerates every taint', async (t) => {
  const node: PlacementNode = {
    name: 'n1',
    taints: [DEDICATED_GIS, { key: 'maintenance', effect: 'NoExecute' }, { key: 'spot', effect: 'PreferNoSchedule' }],
  };
  t.strictSame(verdictOf(tolerating({ operator: 'Exists' }), node), {
    schedulable: true,
    score: 0,
    reasons: [
      'taint dedicated=gis:NoSchedule is tolerated',
      'taint maintenance:NoExecute is tolerated',
      'taint spot:PreferNoSchedule is tolerated',
    ],
  });
  t.equal(verdictOf(tolerating({ operator: 'Exists', key: '' }), node).schedulable, true, 'explicit empty key');
});

t.test('an Equal toleration with another value or key does not tolerate the taint', async (t) => {
  const node: PlacementNode = { name: 'n1', taints: [DEDICATED_GIS] };
  t.equal(verdictOf(tolerating({ key: 'dedicated', operator: 'Equal', value: 'web' }), node).schedulable, false);
  t.equal(verdictOf(tolerating({ key: 'reserved', operator: 'Equal', value: 'gis' }), node).schedulable, false);
  t.equal(verdictOf(tolerating({ key: 'dedicated', operator: 'Equal' }), node).schedulable, false, 'empty value');
  const valueless: PlacementNode = { name: 'n2', taints: [{ key: 'dedicated', effect: 'NoSchedule' }] };
  t.equal(verdictOf(tolerating({ key: 'dedicated', operator: 'Equal' }), valueless).schedulable, true, 'both empty');
});

t.test('a toleration without an effect matches every effect and one with an effect only its own', async (t) => {
  const node: PlacementNode = { name: 'n1', taints: [DEDICATED_GIS, { key: 'dedicated', value: 'gis', effect: 'NoExecute' }] };
  t.equal(verdictOf(tolerating({ key: 'dedicated', operator: 'Equal', value: 'gis' }), node).schedulable, true);
  t.strictSame(verdictOf(tolerating({ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }), node).reasons, [
    'taint dedicated=gis:NoSchedule is tolerated',
    'taint dedicated=gis:NoExecute is not tolerated',
  ]);
});

t.test('an untolerated PreferNoSchedule taint lowers the score but keeps the node schedulable', async (t) => {
  t.equal(PREFER_NO_SCHEDULE_PENALTY, 100);
  const node: PlacementNode = {
    name: 'n1',
    taints: [
      { key: 'spot', value: 'true', effect: 'PreferNoSchedule' },
      { key: 'old', effect: 'PreferNoSchedule' },
    ],
  };
  t.strictSame(verdictOf(tolerating({ key: 'old', operator: 'Exists' }), node), {
    schedulable: true,
    score: -100,
    reasons: ['taint spot=true:PreferNoSchedule is not tolerated: -100', 'taint old:PreferNoSchedule is tolerated'],
  });
  t.equal(verdictOf(tolerating(), node).score, -200);
});

t.test('matched preferred terms add their weight, 1 each in the spec form', async (t) => {
  const zoneA: MatchExpression = { key: 'zone', operator: 'In', values: ['a'] };
  const gpu: MatchExpression = { key: 'gpu', operator: 'Exists' };
  const spec = entry({
    preferredDuringSchedulingIgnoredDuringExecution: {
      nodeSelectorTerms: [{ matchExpressions: [zoneA] }, { matchExpressions: [gpu] }],
    },
  });
  t.strictSame(verdictOf(spec, { name: 'n1', labels: { zone: 'a', gpu: 'a100' } }), {
    schedulable: true,
    score: 2,
    reasons: ['preferred term 1 (zone in [a]) matches: +1', 'preferred term 2 (gpu exists) matches: +1'],
  });
  const weighted: WeightedPreference[] = [
    { weight: 80, preference: { matchExpressions: [zoneA] } },
    { weight: 20, preference: { matchExpressions: [gpu] } },
  ];
  const kubernetes = entry({ preferredDuringSchedulingIgnoredDuringExecution: weighted });
  t.strictSame(verdictOf(kubernetes, { name: 'n2', labels: { zone: 'b' } }), {
    schedulable: true,
    score: 0,
    reasons: [
      'preferred term 1 (zone in [a]) does not match: label zone is "b", not in [a]',
      'preferred term 2 (gpu exists) does not match: label gpu is absent, must exist',
    ],
  });
  t.equal(verdictOf(kubernetes, { name: 'n3', labels: { gpu: 'x' } }).score, 20);
  t.equal(verdictOf(kubernetes, { name: 'n4', labels: { gpu: 'x', zone: 'a' } }).score, 100);
});

t.test('reasons list required affinity, then taints, then preferences', async (t) => {
  const policy = entry(
    {
      requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [SSD] }] },
      preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 30, preference: { matchExpressions: [SSD] } }],
    },
    [{ key: 'dedicated', operator: 'Exists' }],
  );
  t.strictSame(verdictOf(policy, { name: 'n1', labels: { disktype: 'ssd' }, taints: [DEDICATED_GIS] }), {
    schedulable: true,
    score: 30,
    reasons: [
      'required term 1 (disktype in [ssd]) matches',
      'taint dedicated=gis:NoSchedule is tolerated',
      'preferred term 1 (disktype in [ssd]) matches: +30',
    ],
  });
});

t.test('verdicts are sorted schedulable first, then by score descending, then by name', async (t) => {
  const policy = entry(
    {
      requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [SSD] }] },
      preferredDuringSchedulingIgnoredDuringExecution: [
        { weight: 50, preference: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] } },
      ],
    },
    [],
  );
  const ssdInZoneA = { disktype: 'ssd', zone: 'a' };
  const nodes: PlacementNode[] = [
    { name: 'hdd-a', labels: { disktype: 'hdd', zone: 'a' } },
    { name: 'ssd-b2', labels: { disktype: 'ssd', zone: 'b' } },
    { name: 'ssd-a-soft', labels: ssdInZoneA, taints: [{ key: 'spot', effect: 'PreferNoSchedule' }] },
    { name: 'ssd-a', labels: ssdInZoneA },
    { name: 'ssd-b1', labels: { disktype: 'ssd', zone: 'b' } },
    { name: 'ssd-a-hard', labels: ssdInZoneA, taints: [DEDICATED_GIS] },
  ];
  const verdicts = explainPlacement(policy, nodes);
  t.strictSame(
    verdicts.map(({ node, schedulable, score }) => [node, schedulable, score]),
    [
      ['ssd-a', true, 50],
      ['ssd-b1', true, 0],
      ['ssd-b2', true, 0],
      ['ssd-a-soft', true, -50],
      ['hdd-a', false, 50],
      ['ssd-a-hard', false, 50],
    ],
  );
  t.strictSame(explainPlacement(policy, []), []);
});
