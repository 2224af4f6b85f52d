/** Freezes `value` and everything it holds. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const member of Object.values(value)) deepFreeze(member);
    Object.freeze(value);
  }
  return value;
}

/** A Map whose mutators throw: a frozen Map still accepts `set`. */
export function frozenMap<K, V>(entries: Iterable<[K, V]>): ReadonlyMap<K, V> {
  const map = new Map(entries);
  const refuse = (): never => {
    throw new TypeError('the configuration is frozen');
  };
  map.set = refuse;
  map.delete = refuse;
  map.clear = refuse;
  return Object.freeze(map);
}
