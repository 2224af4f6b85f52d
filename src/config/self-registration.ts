import type { GeohookConfig } from './types.js';

/** The hook self-registration registers (`REGISTER`, docs/registration.md). */
export const REGISTERED_HOOK = 'default';

/** True when the configuration asks for self-registration (ADMIN_URL and a non-empty REGISTER). */
export function wantsRegistration(config: GeohookConfig): boolean {
  return config.admin !== undefined && config.admin.register.length > 0;
}
