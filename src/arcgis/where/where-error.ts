import { GeohookError } from '../../errors.js';

/** A `where` clause that cannot be read: `message` says what was wrong, naming the field or the text. */
export class InvalidWhereError extends GeohookError {
  /** The field the clause names that the layer lacks, when that is what is wrong. */
  readonly unknownField: string | undefined;

  constructor(reason: string, unknownField?: string) {
    super('GEOHOOK_ERR_INVALID_WHERE', reason);
    this.name = 'InvalidWhereError';
    this.unknownField = unknownField;
  }
}

/** The error of a clause that cannot be read, for `reason`. */
export const invalidWhere = (reason: string): InvalidWhereError => new InvalidWhereError(reason);
