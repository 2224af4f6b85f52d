import type * as IORedis from 'ioredis';
import { requireDependency } from './require-dependency.js';

/** ioredis's values (`new ioredis.Redis(…)`), loaded with `require`; its types come from `import type { … } from 'ioredis'`. */
export const ioredis = requireDependency('ioredis') as typeof IORedis;
