import type * as Nats from 'nats';
import { onFirstUse } from './require-dependency.js';

/** The NATS client (`loadNats().connect(…)`), loaded at first use: only a stream route of format `nats` needs it. */
export const loadNats = onFirstUse<typeof Nats>('nats');
