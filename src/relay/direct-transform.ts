/** A node of a compiled JSONata expression (`jsonata(…).ast()`), as far as {@link directTransformOf} reads it. */
export interface TransformNode {
  type: string;
  value?: unknown;
  steps?: TransformNode[];
  lhs?: [TransformNode, TransformNode][];
}

/** What a part of a direct transform gives when the event needs JSONata's own evaluation (an array along a path). */
const JSONATA = Symbol('JSONata');

type Part = (input: object) => unknown;

/** The properties each kind of node may have in the subset: any other (a predicate, a `[]`, a focus) is JSONata's. */
const PLAIN_KEYS: Readonly<Record<string, readonly string[]>> = {
  unary: ['type', 'value', 'position', 'lhs'],
  path: ['type', 'steps'],
  name: ['type', 'value', 'position'],
  string: ['type', 'value', 'position'],
  number: ['type', 'value', 'position'],
  value: ['type', 'value', 'position'],
};

/** Keys JSONata refuses in an object it builds. */
const REFUSED_KEYS = new Set(['_jsonata_lambda', '_jsonata_function']);

const isPlain = (node: TransformNode): boolean => {
  const keys = PLAIN_KEYS[node.type];
  return keys !== undefined && Object.keys(node).every((key) => keys.includes(key));
};

/** The value at a path of names, as JSONata finds it in objects; {@link JSONATA} at an array, whose items a path maps. */
function pathPart(names: readonly string[]): Part {
  return (input) => {
    let value: unknown = input;
    for (const name of names) {
      if (Array.isArray(value)) return JSONATA;
      if (value === null || typeof value !== 'object' || !Object.hasOwn(value, name)) return undefined;
      value = (value as Record<string, unknown>)[name];
    }
    return value;
  };
}

/** An object of string keys (each once), a key left out where its value is nothing, as JSONata builds it. */
function objectPart(pairs: readonly (readonly [string, Part])[]): Part {
  return (input) => {
    const result: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const [key, part] of pairs) {
      const value = part(input);
      if (value === JSONATA) return JSONATA;
      if (value !== undefined) result[key] = value;
    }
    return result;
  };
}

/**
 * How many nodes JSONata may evaluate for a node, and how deep it counts it, at most: JSONata evaluates an object's values
 * at once, so that its depth (the bound of `stack`) holds them all.
 */
interface Extent {
  steps: number;
  depth: number;
}

/** A node of the subset as a function of the event with its extent, or undefined for a node outside it. */
function partOf(node: TransformNode): { part: Part; extent: Extent } | undefined {
  if (!isPlain(node)) return undefined;
  switch (node.type) {
    case 'string':
    case 'number':
    case 'value': {
      const { value } = node;
      return { part: () => value, extent: { steps: 1, depth: 1 } };
    }
    case 'path': {
      const steps = node.steps ?? [];
      if (steps.length === 0 || !steps.every((step) => step.type === 'name' && isPlain(step) && typeof step.value === 'string'))
        return undefined;
      return { part: pathPart(steps.map((step) => step.value as string)), extent: { steps: 1 + steps.length, depth: 2 } };
    }
    case 'unary': {
      if (node.value !== '{' || node.lhs === undefined) return undefined;
      const pairs: [string, Part][] = [];
      const extent = { steps: 1, depth: 2 };
      for (const [keyNode, valueNode] of node.lhs) {
        const key = keyNode.type === 'string' && isPlain(keyNode) ? keyNode.value : undefined;
        if (typeof key !== 'string' || REFUSED_KEYS.has(key) || pairs.some(([other]) => other === key)) return undefined;
        const value = partOf(valueNode);
        if (value === undefined) return undefined;
        pairs.push([key, value.part]);
        extent.steps += 1 + value.extent.steps;
        extent.depth += value.extent.depth;
      }
      return { part: objectPart(pairs), extent };
    }
    default:
      return undefined;
  }
}

/**
 * A transform made only of an object of paths of names (`after.attributes.status`), literals and such objects within,
 * its keys strings written once (the form of a flat body), evaluated without JSONata's machinery: a plain function of
 * the event that gives what JSONata gives, or undefined where the event needs JSONata itself (an array along a path,
 * whose items a path maps). Undefined for any other expression, and for one JSONata could stop at `limits` (more
 * steps, or deeper) on some event: those always go to JSONata.
 */
export function directTransformOf(
  ast: TransformNode,
  limits: { maxSteps: number; maxDepth: number },
): ((data: unknown) => object | undefined) | undefined {
  if (ast.type !== 'unary') return undefined;
  const compiled = partOf(ast);
  if (compiled === undefined || compiled.extent.steps > limits.maxSteps || compiled.extent.depth > limits.maxDepth) return undefined;
  const { part } = compiled;
  return (data) => {
    if (data === null || typeof data !== 'object' || Array.isArray(data)) return undefined;
    const result = part(data);
    return result === JSONATA ? undefined : (result as object);
  };
}
