import type * as Undici from 'undici';
import { onFirstUse } from './require-dependency.js';

/** undici (`new (loadUndici().Agent)(…)`), loaded at first use: only relay routes' HTTP deliveries need it. */
export const loadUndici = onFirstUse<typeof Undici>('undici');
