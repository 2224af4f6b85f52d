import t from 'tap';
import { validatePlacementPolicy } from '../../src/arcgis/placement-policy.js';

type Json = Record<string, unknown>;

const POD = 'placementPolicy[0].podPlacementPolicy';
const AFFINITY = `${POD}.nodeAffinity`;
const REQUIRED = `${AFFINITY}.requiredDuringSchedulingIgnoredDuringExecution`;
const PREFERRED = `${AFFINITY}.preferredDuringSchedulingIgnoredDuringExecution`;
const EXPRESSION = `${REQUIRED}.nodeSelectorTerms[0].matchExpressions[0]`;

/** A valid policy in the shape of the spec, for one GPServer deployment. */
function specPolicy(): Json {
  return {
    placementPolicy: [
      {
        deploymentId: 'i3e2zasynsdrbrgbxwxhv',
        deploymentType: 'GPServer',
        podPlacementPolicy: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key: 'disktype', operator: 'In', values: ['ssd'] }] }],
            },
            preferredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['east'] }] }],
            },
          },
          tolerations: [
            { effect: 'NoSchedule', key: 'dedicated', operator: 'Equal', value: 'gis' },
            { key: 'gpu', operator: 'Exists' },
          ],
        },
      },
    ],
  };
}

/** The spec policy with its first entry's podPlacementPolicy replaced. */
function withPod(podPlacementPolicy: unknown): Json {
  const policy = specPolicy();
  (policy.placementPolicy as Json[])[0] = { deploymentId: 'd1', deploymentType: 'GPServer', podPlacementPolicy };
  return policy;
}

/** A policy requiring one match expression. */
function withExpression(expression: unknown): Json {
  const requiredDuringSchedulingIgnoredDuringExecution = { nodeSelectorTerms: [{ matchExpressions: [expression] }] };
  return withPod({ nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution }, tolerations: [] });
}

/** A policy with no affinity and one toleration. */
function withToleration(toleration: unknown): Json {
  return withPod({ nodeAffinity: {}, tolerations: [toleration] });
}

/** A policy with one preferred-affinity value. */
function withPreferred(preferred: unknown): Json {
  return withPod({ nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: preferred }, tolerations: [] });
}

/** The errors validation reports, or [] when the input is valid. */
function errorsOf(input: unknown): string[] {
  const result = validatePlacementPolicy(input);
  return result.ok ? [] : result.errors;
}

t.test('a policy in the shape of the spec is valid and returned as is', async (t) => {
  t.strictSame(validatePlacementPolicy(specPolicy()), { ok: true, policy: specPolicy() });
});

t.test('an empty nodeAffinity is accepted together with tolerations', async (t) => {
  const policy = withPod({ nodeAffinity: {}, tolerations: [{ effect: 'NoExecute', key: 'spot', operator: 'Exists' }] });
  t.strictSame(validatePlacementPolicy(policy), { ok: true, policy });
});

t.test('the Kubernetes weighted form of preferred affinity is accepted', async (t) => {
  const policy = withPreferred([
    { weight: 1, preference: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] } },
    { weight: 100, preference: { matchExpressions: [{ key: 'spot', operator: 'DoesNotExist' }] } },
  ]);
  t.strictSame(errorsOf(policy), []);
});

t.test('Exists and DoesNotExist accept an empty values array, and an Exists toleration an empty value', async (t) => {
  t.strictSame(errorsOf(withExpression({ key: 'gpu', operator: 'Exists', values: [] })), []);
  t.strictSame(errorsOf(withToleration({ key: 'gpu', operator: 'Exists', value: '' })), []);
  t.strictSame(errorsOf(withToleration({ operator: 'Exists' })), []);
});

t.test('a JSON string is parsed and validated', async (t) => {
  t.strictSame(validatePlacementPolicy(JSON.stringify(specPolicy())), { ok: true, policy: specPolicy() });
  t.strictSame(errorsOf(JSON.stringify({ placementPolicy: [] })), ['placementPolicy: must be a non-empty array, got []']);
});

t.test('a string that is not JSON is one error', async (t) => {
  t.strictSame(errorsOf('{"placementPolicy": ['), ['servicePlacementPolicy: not valid JSON']);
});

t.test('a policy that is not an object is refused', async (t) => {
  t.strictSame(errorsOf(42), ['servicePlacementPolicy: must be an object with placementPolicy, got 42']);
  t.strictSame(errorsOf('[1]'), ['servicePlacementPolicy: must be an object with placementPolicy, got [1]']);
});

t.test('placementPolicy must be a non-empty array', async (t) => {
  t.strictSame(errorsOf({}), ['placementPolicy: must be a non-empty array, got nothing']);
  t.strictSame(errorsOf({ placementPolicy: [] }), ['placementPolicy: must be a non-empty array, got []']);
});

t.test('an entry must be an object', async (t) => {
  t.strictSame(errorsOf({ placementPolicy: [null] }), ['placementPolicy[0]: must be an object, got null']);
});

t.test('deploymentId and deploymentType must be non-empty strings', async (t) => {
  const policy = {
    placementPolicy: [{ deploymentId: '', podPlacementPolicy: { nodeAffinity: {}, tolerations: [] } }],
  };
  t.strictSame(errorsOf(policy), [
    'placementPolicy[0].deploymentId: must be a non-empty string, got ""',
    'placementPolicy[0].deploymentType: must be a non-empty string (a service type), got nothing',
  ]);
});

t.test('podPlacementPolicy must be an object', async (t) => {
  t.strictSame(errorsOf(withPod('anywhere')), [`${POD}: must be an object with nodeAffinity and tolerations, got "anywhere"`]);
});

t.test('nodeAffinity must be an object', async (t) => {
  const allowed = 'must be an object ({} for none)';
  t.strictSame(errorsOf(withPod({ tolerations: [] })), [`${AFFINITY}: ${allowed}, got nothing`]);
  t.strictSame(errorsOf(withPod({ nodeAffinity: [], tolerations: [] })), [`${AFFINITY}: ${allowed}, got []`]);
});

t.test('tolerations must be an array', async (t) => {
  t.strictSame(errorsOf(withPod({ nodeAffinity: {} })), [`${POD}.tolerations: must be an array (may be empty), got nothing`]);
});

t.test('an unknown nodeAffinity key is refused naming the two allowed', async (t) => {
  t.strictSame(errorsOf(withPod({ nodeAffinity: { requiredDuringScheduling: {} }, tolerations: [] })), [
    `${AFFINITY}.requiredDuringScheduling: unknown key, must be requiredDuringSchedulingIgnoredDuringExecution` +
      ' or preferredDuringSchedulingIgnoredDuringExecution',
  ]);
});

t.test('required affinity must be an object with nodeSelectorTerms', async (t) => {
  const policy = withPod({ nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [] }, tolerations: [] });
  t.strictSame(errorsOf(policy), [`${REQUIRED}: must be an object with nodeSelectorTerms, got []`]);
});

t.test('nodeSelectorTerms must be a non-empty array', async (t) => {
  const policy = withPod({
    nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } },
    tolerations: [],
  });
  t.strictSame(errorsOf(policy), [`${REQUIRED}.nodeSelectorTerms: must be a non-empty array of objects, got []`]);
});

t.test('a node selector term must be an object with a non-empty matchExpressions array', async (t) => {
  const policy = withPod({
    nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: ['x', {}] } },
    tolerations: [],
  });
  t.strictSame(errorsOf(policy), [
    `${REQUIRED}.nodeSelectorTerms[0]: must be an object with matchExpressions, got "x"`,
    `${REQUIRED}.nodeSelectorTerms[1].matchExpressions: must be a non-empty array, got nothing`,
  ]);
});

t.test('a match expression must be an object', async (t) => {
  t.strictSame(errorsOf(withExpression('disktype=ssd')), [`${EXPRESSION}: must be an object with key and operator, got "disktype=ssd"`]);
});

t.test('a match expression key must be a non-empty string', async (t) => {
  t.strictSame(errorsOf(withExpression({ key: '', operator: 'Exists' })), [
    `${EXPRESSION}.key: must be a non-empty string (a label key), got ""`,
  ]);
});

t.test('a match expression operator must be one of the four', async (t) => {
  t.strictSame(errorsOf(withExpression({ key: 'cpu', operator: 'Gt', values: ['4'] })), [
    `${EXPRESSION}.operator: must be In, NotIn, Exists or DoesNotExist, got "Gt"`,
  ]);
});

t.test('In and NotIn need a non-empty values array', async (t) => {
  t.strictSame(errorsOf(withExpression({ key: 'disktype', operator: 'In' })), [
    `${EXPRESSION}.values: must be a non-empty array of strings for operator In, got nothing`,
  ]);
  t.strictSame(errorsOf(withExpression({ key: 'disktype', operator: 'NotIn', values: [] })), [
    `${EXPRESSION}.values: must be a non-empty array of strings for operator NotIn, got []`,
  ]);
});

t.test('match expression values must be strings', async (t) => {
  t.strictSame(errorsOf(withExpression({ key: 'cores', operator: 'In', values: ['4', 8] })), [
    `${EXPRESSION}.values[1]: must be a string, got 8`,
  ]);
});

t.test('Exists and DoesNotExist must not have values', async (t) => {
  t.strictSame(errorsOf(withExpression({ key: 'gpu', operator: 'Exists', values: ['true'] })), [
    `${EXPRESSION}.values: must be absent or empty for operator Exists, got ["true"]`,
  ]);
  t.strictSame(errorsOf(withExpression({ key: 'gpu', operator: 'DoesNotExist', values: 'true' })), [
    `${EXPRESSION}.values: must be absent or empty for operator DoesNotExist, got "true"`,
  ]);
});

t.test('preferred affinity must be a selector or a non-empty weighted array', async (t) => {
  const allowed = 'must be an object with nodeSelectorTerms or a non-empty array of {weight, preference}';
  t.strictSame(errorsOf(withPreferred('zone=a')), [`${PREFERRED}: ${allowed}, got "zone=a"`]);
  t.strictSame(errorsOf(withPreferred([])), [`${PREFERRED}: ${allowed}, got []`]);
  t.strictSame(errorsOf(withPreferred({ nodeSelectorTerms: [{ matchExpressions: [] }] })), [
    `${PREFERRED}.nodeSelectorTerms[0].matchExpressions: must be a non-empty array, got []`,
  ]);
});

t.test('a weighted preference must be an object', async (t) => {
  t.strictSame(errorsOf(withPreferred([7])), [`${PREFERRED}[0]: must be an object with weight and preference, got 7`]);
});

t.test('a preference weight must be an integer from 1 to 100', async (t) => {
  const preference = { matchExpressions: [{ key: 'zone', operator: 'Exists' }] };
  for (const weight of [0, 101, 2.5, '10', undefined]) {
    const got = weight === undefined ? 'nothing' : JSON.stringify(weight);
    t.strictSame(
      errorsOf(withPreferred([{ weight, preference }])),
      [`${PREFERRED}[0].weight: must be an integer from 1 to 100, got ${got}`],
      String(weight),
    );
  }
});

t.test('a preference must be a term with matchExpressions', async (t) => {
  t.strictSame(errorsOf(withPreferred([{ weight: 5 }])), [
    `${PREFERRED}[0].preference: must be an object with matchExpressions, got nothing`,
  ]);
});

t.test('a toleration must be an object', async (t) => {
  t.strictSame(errorsOf(withToleration('dedicated=gis')), [`${POD}.tolerations[0]: must be an object with operator, got "dedicated=gis"`]);
});

t.test('a toleration operator is required and must be Exists or Equal', async (t) => {
  t.strictSame(errorsOf(withToleration({ key: 'dedicated' })), [`${POD}.tolerations[0].operator: must be Exists or Equal, got nothing`]);
  const policy = withPod({
    nodeAffinity: {},
    tolerations: [
      { key: 'a', operator: 'Exists' },
      { key: 'dedicated', operator: 'Matches', value: 'gis' },
    ],
  });
  t.strictSame(errorsOf(policy), [`${POD}.tolerations[1].operator: must be Exists or Equal, got "Matches"`]);
});

t.test('an Equal toleration needs a key', async (t) => {
  t.strictSame(errorsOf(withToleration({ operator: 'Equal', value: 'gis' })), [
    `${POD}.tolerations[0].key: must be a non-empty string for operator Equal, got nothing`,
  ]);
});

t.test('an Exists toleration must not carry a value', async (t) => {
  t.strictSame(errorsOf(withToleration({ key: 'dedicated', operator: 'Exists', value: 'gis' })), [
    `${POD}.tolerations[0].value: must be absent for operator Exists, got "gis"`,
  ]);
});

t.test('a toleration effect must be one of the three', async (t) => {
  t.strictSame(errorsOf(withToleration({ key: 'dedicated', operator: 'Exists', effect: 'NoExecution' })), [
    `${POD}.tolerations[0].effect: must be NoExecute, NoSchedule or PreferNoSchedule, got "NoExecution"`,
  ]);
});

t.test('toleration keys and values must be strings', async (t) => {
  t.strictSame(errorsOf(withToleration({ key: 1, operator: 'Exists' })), [`${POD}.tolerations[0].key: must be a string, got 1`]);
  t.strictSame(errorsOf(withToleration({ key: 'cores', operator: 'Equal', value: 8 })), [
    `${POD}.tolerations[0].value: must be a string, got 8`,
  ]);
});

t.test('a long offending value is shortened in the message', async (t) => {
  const values = Array.from({ length: 20 }, (_, i) => `v${i}`);
  t.strictSame(errorsOf(withExpression({ key: 'gpu', operator: 'Exists', values })), [
    `${EXPRESSION}.values: must be absent or empty for operator Exists, got ["v0","v1","v2","v3","v4","v5","v6","v7…`,
  ]);
});

t.test('every error is collected, across entries and fields', async (t) => {
  const policy = {
    placementPolicy: [
      {
        deploymentId: 'd1',
        deploymentType: 'GPServer',
        podPlacementPolicy: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key: '', operator: 'In' }] }],
            },
            sometimes: {},
          },
          tolerations: [{ operator: 'Equal', effect: 'Always' }],
        },
      },
      { deploymentType: 'FeatureServer', podPlacementPolicy: { nodeAffinity: {}, tolerations: [] } },
    ],
  };
  t.strictSame(errorsOf(policy), [
    `${EXPRESSION}.key: must be a non-empty string (a label key), got ""`,
    `${EXPRESSION}.values: must be a non-empty array of strings for operator In, got nothing`,
    `${AFFINITY}.sometimes: unknown key, must be requiredDuringSchedulingIgnoredDuringExecution` +
      ' or preferredDuringSchedulingIgnoredDuringExecution',
    `${POD}.tolerations[0].key: must be a non-empty string for operator Equal, got nothing`,
    `${POD}.tolerations[0].effect: must be NoExecute, NoSchedule or PreferNoSchedule, got "Always"`,
    'placementPolicy[1].deploymentId: must be a non-empty string, got nothing',
  ]);
});
