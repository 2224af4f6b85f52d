/** Decoded fields of an `application/x-www-form-urlencoded` body (from `@fastify/formbody`). */
export type FormFields = Record<string, string | string[]>;

/** The first value of a field whose name matches `name` case-insensitively. */
export function formField(fields: FormFields, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(fields)) {
    if (key.toLowerCase() === wanted) return Array.isArray(value) ? value[0] : value;
  }
  return undefined;
}

function decodeFieldName(bytes: Buffer): string {
  try {
    return decodeURIComponent(bytes.toString('latin1').replaceAll('+', ' '));
  } catch {
    return bytes.toString('latin1');
  }
}

/** The raw, still-encoded bytes of a field's value as they stand in the body (ArcGIS Online signs these). */
export function rawFormValue(raw: Buffer, name: string): Buffer | undefined {
  let start = 0;
  while (start <= raw.length) {
    let end = raw.indexOf(0x26 /* & */, start);
    if (end === -1) end = raw.length;
    const pair = raw.subarray(start, end);
    const equals = pair.indexOf(0x3d /* = */);
    if (equals !== -1 && decodeFieldName(pair.subarray(0, equals)) === name) return pair.subarray(equals + 1);
    start = end + 1;
  }
  return undefined;
}
