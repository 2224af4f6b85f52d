import type { z } from 'zod';

type Schema = z.core.$ZodType;

/** The parts of a schema's definition this walk reads; which are set depends on `type`. */
interface Definition {
  readonly type: string;
  readonly innerType?: Schema;
  readonly in?: Schema;
  readonly options?: readonly Schema[];
  readonly shape?: Readonly<Record<string, Schema>>;
  readonly element?: Schema;
  readonly valueType?: Schema;
}

const definition = (schema: Schema): Definition => schema._zod.def as Definition;

/** The schemas a value meets once defaults, optionals and pipes are looked through: a union's options each. */
function unwrap(schema: Schema): Schema[] {
  const def = definition(schema);
  if (def.innerType !== undefined) return unwrap(def.innerType);
  if (def.type === 'pipe' && def.in !== undefined) return unwrap(def.in);
  if (def.type === 'union') return (def.options ?? []).flatMap(unwrap);
  return [schema];
}

/** The schemas of the value at `path` of a value of `schema` (none when the path leaves it). */
export function schemasAt(schema: Schema, path: readonly PropertyKey[]): Schema[] {
  let current = unwrap(schema);
  for (const segment of path) {
    current = current.flatMap((part) => {
      const def = definition(part);
      if (def.type === 'object') {
        const child = def.shape?.[String(segment)];
        return child === undefined ? [] : unwrap(child);
      }
      if (def.type === 'array' && typeof segment === 'number' && def.element !== undefined) return unwrap(def.element);
      if (def.type === 'record' && def.valueType !== undefined) return unwrap(def.valueType);
      return [];
    });
  }
  return current;
}

/** The keys an object at `path` of `schema` takes, in the schema's order. */
export function knownKeysAt(schema: Schema, path: readonly PropertyKey[]): string[] {
  const keys = schemasAt(schema, path).flatMap((part) => Object.keys(definition(part).shape ?? {}));
  return [...new Set(keys)];
}

/** Whether the value at `path` of `schema` may be a list. */
export function isListAt(schema: Schema, path: readonly PropertyKey[]): boolean {
  return schemasAt(schema, path).some((part) => definition(part).type === 'array');
}
