/** How much a failed check matters: an `error` stops webhooks from working (exit 1); a `warning` is a risk. */
export type Severity = 'error' | 'warning';

/** One line of `geohook doctor` (docs/troubleshooting.md lists every `id`). */
export interface Check {
  /** Stable name, such as `feature.change-tracking`. */
  id: string;
  ok: boolean;
  severity: Severity;
  /** What was found, in one sentence. */
  message: string;
  /** When not ok: the exact change that fixes it (a command, an admin call, a setting). */
  fix?: string;
}

/** A check that holds. */
export const passed = (id: string, message: string, severity: Severity = 'error'): Check => ({ id, ok: true, severity, message });

/** A check that does not hold, with its fix. */
export const failed = (id: string, message: string, fix: string, severity: Severity = 'error'): Check => ({
  id,
  ok: false,
  severity,
  message,
  fix,
});

/** True when a check failed that stops webhooks from working. */
export const isRed = (check: Check): boolean => !check.ok && check.severity === 'error';
