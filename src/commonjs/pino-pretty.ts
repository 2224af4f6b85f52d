import type PinoPretty from 'pino-pretty';
import { onFirstUse } from './require-dependency.js';

/** pino-pretty's stream factory, loaded at first use: only log lines for a person (`LOG_FORMAT=pretty`) need it. */
export const loadPinoPretty = onFirstUse<typeof PinoPretty>('pino-pretty');
