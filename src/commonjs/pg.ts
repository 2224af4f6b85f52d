import type Pg from 'pg';
import { onFirstUse } from './require-dependency.js';

/** node-postgres (`new (loadPg().Pool)(…)`), loaded at first use: only the mirror and its database need it. */
export const loadPg = onFirstUse<typeof Pg>('pg');
