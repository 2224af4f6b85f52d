/** A number with `digits` decimals, `–` when it is not finite. */
export const fixed = (value: number, digits = 0): string => (Number.isFinite(value) ? value.toFixed(digits) : '–');

/** A whole number with thousands separators, `–` when it is not finite. */
export const thousands = (value: number): string => (Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : '–');

/** The middle value (the mean of the two middle ones for an even count); NaN for none. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
