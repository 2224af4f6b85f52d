import type Fastify from 'fastify';
import { requireDependency } from './require-dependency.js';

/** Fastify's factory (`fastify({ … })`, and its values: `fastify.LogController`), loaded with `require`; its types come from `import type { … } from 'fastify'`. */
export const fastify = requireDependency('fastify') as typeof Fastify;
