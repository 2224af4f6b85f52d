import { InvalidWhereError } from '../../arcgis/where/where-error.js';
import { compileWhere as compileClause, type WhereField } from '../../arcgis/where/where.js';
import { AdminError } from '../admin-error.js';

/**
 * The layer's `where` test ({@link compileClause}), a clause it cannot read answered as the real server answers it:
 * a 400 "'where' parameter is invalid" with what was wrong (naming the field or the text) as a last detail.
 */
export function compileWhere(where: string, fields: readonly WhereField[]): ReturnType<typeof compileClause> {
  try {
    return compileClause(where, fields);
  } catch (err) {
    if (!(err instanceof InvalidWhereError)) throw err;
    throw new AdminError(400, 'Unable to complete operation.', "'where' parameter is invalid", err.message);
  }
}
