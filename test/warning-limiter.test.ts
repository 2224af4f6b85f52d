import t from 'tap';
import { createWarningLimiter } from '../src/warning-limiter.js';
import { capturingLogger } from './helpers/log-capture.js';

t.test('a warning is logged once per cause per interval, the next one saying how many it left out', async (t) => {
  const { logger, lines } = capturingLogger('info');
  let now = 0;
  const warnings = createWarningLimiter(logger, 60_000, () => now);
  for (let i = 0; i < 50; i += 1) warnings.warn({ scope: `s${i}` }, 'cause A');
  warnings.warn({ scope: 'x' }, 'cause B');
  now = 60_000;
  warnings.warn({ scope: 's50' }, 'cause A');
  const logged = lines.map((line) => JSON.parse(line) as { msg: string; scope: string; suppressed?: number });
  t.same(
    logged.map(({ msg, scope, suppressed }) => ({ msg, scope, suppressed })),
    [
      { msg: 'cause A', scope: 's0', suppressed: undefined },
      { msg: 'cause B', scope: 'x', suppressed: undefined },
      { msg: 'cause A', scope: 's50', suppressed: 49 },
    ],
  );
});
