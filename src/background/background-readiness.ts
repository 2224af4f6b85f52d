import type { GeohookConfig } from '../config/load-config.js';
import { wantsRegistration } from '../config/self-registration.js';
import type { Background } from './start-background.js';

/** A readiness check: why the server is not ready yet, or `undefined` when it is. */
type ReadinessCheck = () => string | undefined;

/**
 * What `/readyz` asks of what runs beside the receiver (`startBackground`), by the configuration: registration,
 * change events and subscriptions, each pending until its part has started, then its own reason, if any.
 * `current` is read at each check: the background starts once Redis answers.
 */
export function backgroundReadiness(config: GeohookConfig, current: () => Background | undefined): ReadinessCheck[] {
  const registration: ReadinessCheck = () => {
    const running = current()?.registration;
    return running === undefined ? 'registration pending' : running.notReadyReason();
  };
  /** Pending until the background has started, then `reason` of it. */
  const started =
    (what: string, reason: (background: Background) => string | undefined): ReadinessCheck =>
    () => {
      const background = current();
      return background === undefined ? `${what} pending` : reason(background);
    };
  return [
    ...(wantsRegistration(config) ? [registration] : []),
    ...((config.admin?.changes.services.length ?? 0) > 0
      ? [started('change events', (background) => background.changes?.notReadyReason())]
      : []),
    ...(config.subscriptions.length > 0 ? [started('subscriptions', (background) => background.outputs.notReadyReason())] : []),
  ];
}
