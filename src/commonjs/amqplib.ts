import type * as Amqplib from 'amqplib';
import { onFirstUse } from './require-dependency.js';

/** The AMQP client (`loadAmqplib().connect(…)`), loaded at first use: only a stream route of format `amqp` needs it. */
export const loadAmqplib = onFirstUse<typeof Amqplib>('amqplib');
