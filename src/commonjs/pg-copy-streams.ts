import type * as PgCopyStreams from 'pg-copy-streams';
import { onFirstUse } from './require-dependency.js';

/** pg-copy-streams (`loadPgCopyStreams().from(sql)`), loaded at first use: only the mirror's copies need it. */
export const loadPgCopyStreams = onFirstUse<typeof PgCopyStreams>('pg-copy-streams');
