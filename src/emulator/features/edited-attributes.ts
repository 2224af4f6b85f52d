import { invalidParameter } from '../admin-error.js';
import type { FeatureLayer } from './feature-layer.js';
import { fieldValue, type EditError } from './field-values.js';
import type { Attributes } from './types.js';

/** A list of an edit (`adds`, `updates`; `deletes` also as a comma list); a 400 naming it for anything else. */
export function listOf(value: unknown, name: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) return value;
  if (typeof value === 'string' && name === 'deletes') return value.split(',').filter((item) => item.trim() !== '');
  throw invalidParameter(name, 'must be a JSON array');
}

/** An edited feature's `attributes`, when it has an object of them. */
export const attributesOf = (feature: unknown): Record<string, unknown> | undefined => {
  const attributes = (feature as { attributes?: unknown } | null)?.attributes;
  return attributes !== null && typeof attributes === 'object' && !Array.isArray(attributes)
    ? (attributes as Record<string, unknown>)
    : undefined;
};

/** The editable attributes an edit sets, typed by the layer's fields; the first bad value's error otherwise. */
export function editedAttributes(layer: FeatureLayer, given: Record<string, unknown>): { attributes: Attributes } | { error: EditError } {
  const attributes: Attributes = {};
  for (const [name, value] of Object.entries(given)) {
    const field = layer.definition.fields.find((candidate) => candidate.name.toLowerCase() === name.toLowerCase());
    if (field === undefined) return { error: { code: 1000, description: `Field '${name}' does not exist in layer ${layer.id}.` } };
    if (!field.editable) continue;
    const typed = fieldValue(field, value);
    if ('error' in typed) return typed;
    attributes[field.name] = typed.value;
  }
  return { attributes };
}
