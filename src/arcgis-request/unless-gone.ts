import { AdminApiError } from '../errors.js';

/**
 * What `reading` resolves to; undefined when the server answers 404: what it reads (an attachment, or the feature
 * holding it) was deleted since it was listed. Any other failure is thrown as it came.
 */
export const unlessGone = <T>(reading: Promise<T>): Promise<T | undefined> =>
  reading.catch((err: unknown) => {
    if (err instanceof AdminApiError && err.serverCode === 404) return undefined;
    throw err;
  });
