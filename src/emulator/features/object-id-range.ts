import { parseWhere, type CompareOp, type Condition, type Operand } from '../../arcgis/where/where-parser.js';

/** The object ids a `where` clause can match at most: those from `min` to `max`, both included. */
export interface ObjectIdRange {
  min: number;
  max: number;
}

const EVERY_ID: ObjectIdRange = { min: Number.NEGATIVE_INFINITY, max: Number.POSITIVE_INFINITY };

/** `a op b` read as `b op' a`. */
const MIRRORED: Record<CompareOp, CompareOp> = { '=': '=', '<>': '<>', '<': '>', '<=': '>=', '>': '<', '>=': '<=' };

/** The range `<field> op value` allows (integers only: object ids are). */
function rangeOf(op: CompareOp, value: number): ObjectIdRange {
  switch (op) {
    case '=':
      return { min: value, max: value };
    case '>':
      return { min: Math.floor(value) + 1, max: Number.POSITIVE_INFINITY };
    case '>=':
      return { min: Math.ceil(value), max: Number.POSITIVE_INFINITY };
    case '<':
      return { min: Number.NEGATIVE_INFINITY, max: Math.ceil(value) - 1 };
    case '<=':
      return { min: Number.NEGATIVE_INFINITY, max: Math.floor(value) };
    case '<>':
      return EVERY_ID;
  }
}

const isField = (operand: Operand, name: string): boolean => operand.type === 'field' && operand.name.toLowerCase() === name;

function conditionRange(condition: Condition, name: string): ObjectIdRange {
  if (condition.type === 'and') {
    return condition.items
      .map((item) => conditionRange(item, name))
      .reduce((a, b) => ({ min: Math.max(a.min, b.min), max: Math.min(a.max, b.max) }), EVERY_ID);
  }
  if (condition.type !== 'compare') return EVERY_ID;
  const { op, left, right } = condition;
  if (isField(left, name) && right.type === 'number') return rangeOf(op, Number(right.value));
  if (isField(right, name) && left.type === 'number') return rangeOf(MIRRORED[op], Number(left.value));
  return EVERY_ID;
}

/**
 * The object ids a `where` clause (already known to compile) can match, read from comparisons of the object id
 * field with numbers joined by `AND` (`objectid > 2000 AND objectid <= 4000`): what an index range scan reads on
 * the real server. Any other clause allows every id; the clause is still the test of each row.
 */
export function objectIdRangeOf(where: string, objectIdField: string): ObjectIdRange {
  return conditionRange(parseWhere(where), objectIdField.toLowerCase());
}
