/** A number with `digits` decimals, `–` when it is not finite. */
export const fixed = (value: number, digits = 0): string => (Number.isFinite(value) ? value.toFixed(digits) : '–');

/** A whole number with thousands separators, `–` when it is not finite. */
export const thousands = (value: number): string => (Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : '–');
