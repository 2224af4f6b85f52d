import { AdminError } from '../admin-error.js';

/**
 * 400 for a `where` clause the emulator cannot run, worded as the real server words it, with `reason` (what
 * was wrong, naming the field or the text) as a last detail.
 */
export const invalidWhere = (reason: string): AdminError =>
  new AdminError(400, 'Unable to complete operation.', "'where' parameter is invalid", reason);
