import type { LoggerOptions } from 'pino';

/** Inputs of {@link createLoggerOptions}. */
export interface LoggerSettings {
  /** pino level. @defaultValue 'info' */
  level?: string;
  /** Lower-cased names of the headers that carry signatures; their values never reach a log line. */
  signatureHeaders?: readonly string[];
}

const SECRET_FIELDS = ['secrets', 'secret', 'signatureKey', 'token', 'password'];

/**
 * pino options shared by every geohook process: signature headers, credentials and keys are censored
 * wherever they appear in a logged object, at the top level or one level down.
 */
export function createLoggerOptions(settings: LoggerSettings = {}): LoggerOptions {
  const headers = ['authorization', 'cookie', ...(settings.signatureHeaders ?? ['x-service', 'x-esrihook-signature'])];
  return {
    level: settings.level ?? 'info',
    serializers: {
      // Headers are logged (content type, user agent, lengths help when a sender misbehaves); the
      // signature and credential headers among them are redacted below.
      req: (req: { method: string; url: string; headers: Record<string, unknown>; ip?: string }) => ({
        method: req.method,
        url: req.url,
        headers: req.headers,
        remoteAddress: req.ip,
      }),
    },
    redact: {
      paths: [
        ...headers.map((name) => `req.headers["${name}"]`),
        ...SECRET_FIELDS.flatMap((field) => [field, `*.${field}`]),
      ],
      censor: '[redacted]',
    },
  };
}
