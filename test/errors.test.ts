import { readFileSync } from 'node:fs';
import t from 'tap';
import { errorCodes, GeohookError, QueueUnavailableError } from '../src/errors.js';
import { repoPath } from './helpers/paths.js';

t.test('the error table of docs/errors.md lists every code with its status and meaning, in the order of the registry', async (t) => {
  const page = readFileSync(repoPath('docs', 'errors.md'), 'utf8');
  const documented = [...page.matchAll(/^\| `(GEOHOOK_ERR_[A-Z_]+)` \| (\d+) \| (.+) \|$/gm)].map((m) => [m[1], Number(m[2]), m[3]]);
  t.same(
    documented,
    Object.entries(errorCodes).map(([code, { statusCode, summary }]) => [code, statusCode, summary]),
  );
});

t.test('an error carries its code and the status of the registry', async (t) => {
  const err = new GeohookError('GEOHOOK_ERR_UNKNOWN_HOOK', 'no hook');
  t.equal(err.code, 'GEOHOOK_ERR_UNKNOWN_HOOK');
  t.equal(err.statusCode, 404);
  t.ok(err instanceof Error);
  const unavailable = new QueueUnavailableError('down', 7);
  t.equal(unavailable.statusCode, 503);
  t.equal(unavailable.retryAfterSeconds, 7);
});
