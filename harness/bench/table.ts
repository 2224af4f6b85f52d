/**
 * Rows of text with each column padded to its widest cell. A column whose cells below the header are all
 * numbers (or "–") is right-aligned, header included; the others are left-aligned.
 */
export function alignedTable(rows: readonly (readonly string[])[]): string[] {
  const numeric = /^[-+]?[\d,.]+(?:×| ?%| ms| s| MiB|\/s)?$|^–$/;
  const [header = [], ...body] = rows;
  const columns = header.map((_, column) => ({
    width: Math.max(...rows.map((row) => row[column]!.length)),
    right: body.length > 0 && body.every((row) => numeric.test(row[column]!)),
  }));
  return rows.map((row) =>
    row
      .map((cell, column) => (columns[column]!.right ? cell.padStart(columns[column]!.width) : cell.padEnd(columns[column]!.width)))
      .join('  ')
      .trimEnd(),
  );
}
