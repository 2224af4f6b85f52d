/** A node-label operator of a match expression. */
export type LabelOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

/** One condition on a node label; `values` is required for `In`/`NotIn` and empty or absent otherwise. */
export interface MatchExpression {
  key: string;
  operator: LabelOperator;
  values?: string[];
}

/** A term matches a node when ALL its match expressions match. */
export interface NodeSelectorTerm {
  matchExpressions: MatchExpression[];
}

/** A node matches a selector when it matches at least ONE of its terms. */
export interface NodeSelector {
  nodeSelectorTerms: NodeSelectorTerm[];
}

/** The Kubernetes form of a preferred term: its weight (1–100) is added to a node's score when it matches. */
export interface WeightedPreference {
  weight: number;
  preference: NodeSelectorTerm;
}

/**
 * Node affinity of a service's pods. Both keys are optional, so `{}` (no affinity) is a `NodeAffinity`.
 * The preferred key takes the ArcGIS form (a selector, each term weighing 1) or the Kubernetes form.
 */
export interface NodeAffinity {
  requiredDuringSchedulingIgnoredDuringExecution?: NodeSelector;
  preferredDuringSchedulingIgnoredDuringExecution?: NodeSelector | WeightedPreference[];
}

/** The effect of a node taint, or of the taints a toleration applies to. */
export type TaintEffect = 'NoExecute' | 'NoSchedule' | 'PreferNoSchedule';

/** Lets a pod onto nodes with a matching taint; an `Exists` toleration without a key tolerates every taint. */
export interface Toleration {
  effect?: TaintEffect;
  key?: string;
  operator: 'Exists' | 'Equal';
  value?: string;
}

/** Where the pods of one deployment may and would rather run. */
export interface PodPlacementPolicy {
  nodeAffinity: NodeAffinity;
  tolerations: Toleration[];
}

/** The placement policy of one deployment of a service. */
export interface PlacementPolicyEntry {
  deploymentId: string;
  /** The service type, such as `GPServer`. */
  deploymentType: string;
  podPlacementPolicy: PodPlacementPolicy;
}

/** The `servicePlacementPolicy` parameter of `placementPolicy/edit`. */
export interface ServicePlacementPolicy {
  placementPolicy: PlacementPolicyEntry[];
}

/** The outcome of {@link validatePlacementPolicy}: the typed policy, or every problem found. */
export type PlacementPolicyValidation = { ok: true; policy: ServicePlacementPolicy } | { ok: false; errors: string[] };

type JsonObject = Record<string, unknown>;

const REQUIRED = 'requiredDuringSchedulingIgnoredDuringExecution';
const PREFERRED = 'preferredDuringSchedulingIgnoredDuringExecution';
const LABEL_OPERATORS: readonly string[] = ['In', 'NotIn', 'Exists', 'DoesNotExist'];
const EFFECTS: readonly string[] = ['NoExecute', 'NoSchedule', 'PreferNoSchedule'];

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A short rendering of an offending value for an error message. */
function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (isObject(value)) return 'an object';
  const json = JSON.stringify(value);
  return json.length > 40 ? `${json.slice(0, 39)}…` : json;
}

/** Collects messages of the form `path: must be <allowed>, got <value>`. */
class Problems {
  readonly errors: string[] = [];

  add(path: string, allowed: string, value: unknown): void {
    this.errors.push(`${path}: must be ${allowed}, got ${describe(value)}`);
  }

  /** `value` at `path` is a non-empty array; otherwise records `allowed`. */
  nonEmptyArray(value: unknown, path: string, allowed: string): value is unknown[] {
    if (Array.isArray(value) && value.length > 0) return true;
    this.add(path, allowed, value);
    return false;
  }

  nonEmptyString(value: unknown, path: string, allowed = 'a non-empty string'): void {
    if (typeof value !== 'string' || value.length === 0) this.add(path, allowed, value);
  }

  optionalString(value: unknown, path: string): void {
    if (value !== undefined && typeof value !== 'string') this.add(path, 'a string', value);
  }
}

function checkExpression(expression: unknown, path: string, problems: Problems): void {
  if (!isObject(expression)) return problems.add(path, 'an object with key and operator', expression);
  const { key, operator, values } = expression;
  problems.nonEmptyString(key, `${path}.key`, 'a non-empty string (a label key)');
  if (typeof operator !== 'string' || !LABEL_OPERATORS.includes(operator)) {
    return problems.add(`${path}.operator`, 'In, NotIn, Exists or DoesNotExist', operator);
  }
  if (operator === 'In' || operator === 'NotIn') {
    const allowed = `a non-empty array of strings for operator ${operator}`;
    if (!problems.nonEmptyArray(values, `${path}.values`, allowed)) return;
    values.forEach((value, i) => {
      if (typeof value !== 'string') problems.add(`${path}.values[${i}]`, 'a string', value);
    });
  } else if (!(values === undefined || (Array.isArray(values) && values.length === 0))) {
    problems.add(`${path}.values`, `absent or empty for operator ${operator}`, values);
  }
}

function checkTerm(term: unknown, path: string, problems: Problems): void {
  if (!isObject(term)) return problems.add(path, 'an object with matchExpressions', term);
  const expressions = term.matchExpressions;
  if (!problems.nonEmptyArray(expressions, `${path}.matchExpressions`, 'a non-empty array')) return;
  expressions.forEach((expression, i) => checkExpression(expression, `${path}.matchExpressions[${i}]`, problems));
}

function checkSelector(selector: unknown, path: string, problems: Problems): void {
  if (!isObject(selector)) return problems.add(path, 'an object with nodeSelectorTerms', selector);
  const terms = selector.nodeSelectorTerms;
  if (!problems.nonEmptyArray(terms, `${path}.nodeSelectorTerms`, 'a non-empty array of objects')) return;
  terms.forEach((term, i) => checkTerm(term, `${path}.nodeSelectorTerms[${i}]`, problems));
}

function checkWeightedPreference(item: unknown, path: string, problems: Problems): void {
  if (!isObject(item)) return problems.add(path, 'an object with weight and preference', item);
  const { weight } = item;
  if (typeof weight !== 'number' || !Number.isInteger(weight) || weight < 1 || weight > 100) {
    problems.add(`${path}.weight`, 'an integer from 1 to 100', weight);
  }
  checkTerm(item.preference, `${path}.preference`, problems);
}

function checkPreferred(preferred: unknown, path: string, problems: Problems): void {
  if (isObject(preferred)) return checkSelector(preferred, path, problems);
  const allowed = 'an object with nodeSelectorTerms or a non-empty array of {weight, preference}';
  if (!problems.nonEmptyArray(preferred, path, allowed)) return;
  preferred.forEach((item, i) => checkWeightedPreference(item, `${path}[${i}]`, problems));
}

function checkNodeAffinity(affinity: unknown, path: string, problems: Problems): void {
  if (!isObject(affinity)) return problems.add(path, 'an object ({} for none)', affinity);
  for (const [key, value] of Object.entries(affinity)) {
    if (key === REQUIRED) checkSelector(value, `${path}.${key}`, problems);
    else if (key === PREFERRED) checkPreferred(value, `${path}.${key}`, problems);
    else problems.errors.push(`${path}.${key}: unknown key, must be ${REQUIRED} or ${PREFERRED}`);
  }
}

function checkToleration(toleration: unknown, path: string, problems: Problems): void {
  if (!isObject(toleration)) return problems.add(path, 'an object with operator', toleration);
  const { effect, key, operator, value } = toleration;
  if (operator !== 'Exists' && operator !== 'Equal') problems.add(`${path}.operator`, 'Exists or Equal', operator);
  if (operator === 'Equal') problems.nonEmptyString(key, `${path}.key`, 'a non-empty string for operator Equal');
  else problems.optionalString(key, `${path}.key`);
  if (operator === 'Exists' && value !== undefined && value !== '') {
    problems.add(`${path}.value`, 'absent for operator Exists', value);
  } else problems.optionalString(value, `${path}.value`);
  if (effect !== undefined && (typeof effect !== 'string' || !EFFECTS.includes(effect))) {
    problems.add(`${path}.effect`, 'NoExecute, NoSchedule or PreferNoSchedule', effect);
  }
}

function checkEntry(entry: unknown, path: string, problems: Problems): void {
  if (!isObject(entry)) return problems.add(path, 'an object', entry);
  problems.nonEmptyString(entry.deploymentId, `${path}.deploymentId`);
  problems.nonEmptyString(entry.deploymentType, `${path}.deploymentType`, 'a non-empty string (a service type)');
  const pod = entry.podPlacementPolicy;
  const podPath = `${path}.podPlacementPolicy`;
  if (!isObject(pod)) return problems.add(podPath, 'an object with nodeAffinity and tolerations', pod);
  checkNodeAffinity(pod.nodeAffinity, `${podPath}.nodeAffinity`, problems);
  const { tolerations } = pod;
  const tolerationsPath = `${podPath}.tolerations`;
  if (!Array.isArray(tolerations)) return problems.add(tolerationsPath, 'an array (may be empty)', tolerations);
  tolerations.forEach((toleration, i) => checkToleration(toleration, `${tolerationsPath}[${i}]`, problems));
}

/**
 * Checks a `servicePlacementPolicy` — an object, or the JSON string sent to `placementPolicy/edit` — against
 * the whole placement-policy shape. Every problem is reported, each naming its JSON path and what is allowed,
 * e.g. `placementPolicy[0].podPlacementPolicy.tolerations[1].operator: must be Exists or Equal, got "Matches"`.
 * On success the (parsed) input is returned as is, typed.
 */
export function validatePlacementPolicy(input: unknown): PlacementPolicyValidation {
  let value = input;
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input);
    } catch {
      return { ok: false, errors: ['servicePlacementPolicy: not valid JSON'] };
    }
  }
  const problems = new Problems();
  if (!isObject(value)) {
    problems.add('servicePlacementPolicy', 'an object with placementPolicy', value);
  } else if (problems.nonEmptyArray(value.placementPolicy, 'placementPolicy', 'a non-empty array')) {
    value.placementPolicy.forEach((entry, i) => checkEntry(entry, `placementPolicy[${i}]`, problems));
  }
  if (problems.errors.length > 0) return { ok: false, errors: problems.errors };
  return { ok: true, policy: value as ServicePlacementPolicy };
}
