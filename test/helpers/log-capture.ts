import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';
import { createLoggerOptions } from '../../src/logger.js';

/** A pino logger with geohook's options (redaction included) and the lines it wrote, one JSON text each. */
export function capturingLogger(level = 'trace'): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  return { logger: pino(createLoggerOptions({ level }), sink), lines };
}
