import type {
  MatchExpression,
  NodeAffinity,
  NodeSelectorTerm,
  PlacementPolicyEntry,
  TaintEffect,
  Toleration,
  WeightedPreference,
} from './placement-policy.js';

/** A taint on a node, written `key=value:effect` in reasons. */
export interface NodeTaint {
  key: string;
  value?: string;
  effect: TaintEffect;
}

/** A cluster node as the scheduler sees it: its labels and taints. */
export interface PlacementNode {
  name: string;
  labels?: Record<string, string>;
  taints?: NodeTaint[];
}

/** Whether a policy's pods may run on a node, how much the node is preferred, and why. */
export interface NodeVerdict {
  node: string;
  /** False when the required node affinity is not met or a NoSchedule/NoExecute taint is not tolerated. */
  schedulable: boolean;
  /** Weights of the matched preferred terms, less {@link PREFER_NO_SCHEDULE_PENALTY} per untolerated soft taint. */
  score: number;
  /** One sentence per required term checked, taint and preferred term, naming the labels and taints. */
  reasons: string[];
}

/**
 * What an untolerated `PreferNoSchedule` taint takes off a node's score: as much as the heaviest preferred
 * term can add, so the scheduler's "avoid if possible" is not outweighed by a single preference.
 */
export const PREFER_NO_SCHEDULE_PENALTY = 100;

type Labels = Record<string, string>;

function labelOf(labels: Labels, key: string): string | undefined {
  return Object.hasOwn(labels, key) ? labels[key] : undefined;
}

const list = (values: string[] | undefined): string => `[${(values ?? []).join(', ')}]`;

/** `disktype in [ssd]`, `gpu exists`… */
function summarise({ key, operator, values }: MatchExpression): string {
  switch (operator) {
    case 'In':
      return `${key} in ${list(values)}`;
    case 'NotIn':
      return `${key} not in ${list(values)}`;
    case 'Exists':
      return `${key} exists`;
    case 'DoesNotExist':
      return `${key} does not exist`;
  }
}

/** Why a node's labels fail an expression, or undefined when they match it. */
function mismatch({ key, operator, values = [] }: MatchExpression, labels: Labels): string | undefined {
  const value = labelOf(labels, key);
  const actual = value === undefined ? 'absent' : JSON.stringify(value);
  const listed = value !== undefined && values.includes(value);
  switch (operator) {
    case 'In':
      return listed ? undefined : `label ${key} is ${actual}, not in ${list(values)}`;
    case 'NotIn':
      return listed ? `label ${key} is ${actual}, in excluded ${list(values)}` : undefined;
    case 'Exists':
      return value !== undefined ? undefined : `label ${key} is absent, must exist`;
    case 'DoesNotExist':
      return value === undefined ? undefined : `label ${key} is ${actual}, must not exist`;
  }
}

/** Why a node fails a term (ALL expressions must match; an empty term matches nothing); empty when it matches. */
function termMismatches(term: NodeSelectorTerm, labels: Labels): string[] {
  if (term.matchExpressions.length === 0) return ['it has no match expressions'];
  return term.matchExpressions.flatMap((expression) => mismatch(expression, labels) ?? []);
}

const describeTerm = (term: NodeSelectorTerm): string => term.matchExpressions.map(summarise).join(' and ');

/** The node must match at least ONE required term: the first match is reported, or every term's failure. */
function checkRequired(terms: NodeSelectorTerm[], labels: Labels): { matched: boolean; reasons: string[] } {
  if (terms.length === 0) return { matched: false, reasons: ['required node affinity has no terms: no node matches'] };
  const reasons: string[] = [];
  for (const [i, term] of terms.entries()) {
    const failures = termMismatches(term, labels);
    const name = `required term ${i + 1} (${describeTerm(term)})`;
    if (failures.length === 0) return { matched: true, reasons: [`${name} matches`] };
    reasons.push(`${name} does not match: ${failures.join('; ')}`);
  }
  return { matched: false, reasons };
}

type Preferred = NodeAffinity['preferredDuringSchedulingIgnoredDuringExecution'];

/** Preferred terms with their weights: the ArcGIS form weighs 1 per term, the Kubernetes form carries its own. */
function weightedTerms(preferred: Preferred): WeightedPreference[] {
  if (preferred === undefined) return [];
  if (Array.isArray(preferred)) return preferred;
  return preferred.nodeSelectorTerms.map((preference) => ({ weight: 1, preference }));
}

/**
 * Kubernetes matching: the effects are equal (or the toleration has none), and either the operator is Exists
 * and the keys are equal (or the toleration has none: any key), or it is Equal and keys and values are equal.
 */
function tolerates(toleration: Toleration, taint: NodeTaint): boolean {
  if (toleration.effect !== undefined && toleration.effect !== taint.effect) return false;
  if (toleration.operator === 'Exists') return !toleration.key || toleration.key === taint.key;
  return toleration.key === taint.key && (toleration.value ?? '') === (taint.value ?? '');
}

const formatTaint = ({ key, value, effect }: NodeTaint): string => `${key}${value ? `=${value}` : ''}:${effect}`;

function explainNode(entry: PlacementPolicyEntry, node: PlacementNode): NodeVerdict {
  const { nodeAffinity, tolerations } = entry.podPlacementPolicy;
  const labels = node.labels ?? {};
  const verdict: NodeVerdict = { node: node.name, schedulable: true, score: 0, reasons: [] };

  const required = nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution;
  if (required !== undefined) {
    const { matched, reasons } = checkRequired(required.nodeSelectorTerms, labels);
    verdict.schedulable = matched;
    verdict.reasons.push(...reasons);
  }

  for (const taint of node.taints ?? []) {
    const name = `taint ${formatTaint(taint)}`;
    if (tolerations.some((toleration) => tolerates(toleration, taint))) {
      verdict.reasons.push(`${name} is tolerated`);
    } else if (taint.effect === 'PreferNoSchedule') {
      verdict.score -= PREFER_NO_SCHEDULE_PENALTY;
      verdict.reasons.push(`${name} is not tolerated: -${PREFER_NO_SCHEDULE_PENALTY}`);
    } else {
      verdict.schedulable = false;
      verdict.reasons.push(`${name} is not tolerated`);
    }
  }

  const preferred = weightedTerms(nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution);
  for (const [i, { weight, preference }] of preferred.entries()) {
    const failures = termMismatches(preference, labels);
    const name = `preferred term ${i + 1} (${describeTerm(preference)})`;
    if (failures.length === 0) {
      verdict.score += weight;
      verdict.reasons.push(`${name} matches: +${weight}`);
    } else verdict.reasons.push(`${name} does not match: ${failures.join('; ')}`);
  }
  return verdict;
}

function byPreference(a: NodeVerdict, b: NodeVerdict): number {
  if (a.schedulable !== b.schedulable) return a.schedulable ? -1 : 1;
  if (a.score !== b.score) return b.score - a.score;
  return a.node < b.node ? -1 : a.node > b.node ? 1 : 0;
}

/**
 * Explains where the pods of one placement-policy entry could run, following Kubernetes scheduling: a node
 * is schedulable when it matches at least one required node-selector term (all of the term's expressions)
 * and every NoSchedule/NoExecute taint on it is tolerated. Its score adds the weights of the matched
 * preferred terms (1 each in the ArcGIS form) and subtracts {@link PREFER_NO_SCHEDULE_PENALTY} for each
 * untolerated PreferNoSchedule taint. Verdicts come schedulable first, then by score descending, then name.
 */
export function explainPlacement(policy: PlacementPolicyEntry, nodes: PlacementNode[]): NodeVerdict[] {
  return nodes.map((node) => explainNode(policy, node)).sort(byPreference);
}
