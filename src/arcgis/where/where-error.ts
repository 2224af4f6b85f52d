import { GeohookError } from '../../errors.js';

/** A `where` clause that cannot be read: `message` says what was wrong, naming the field or the text. */
export class InvalidWhereError extends GeohookError {
  constructor(reason: string) {
    super('GEOHOOK_ERR_INVALID_WHERE', reason);
    this.name = 'InvalidWhereError';
  }
}

/** The error of a clause that cannot be read, for `reason`. */
export const invalidWhere = (reason: string): InvalidWhereError => new InvalidWhereError(reason);
