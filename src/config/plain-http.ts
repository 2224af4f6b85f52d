import type { Logger } from 'pino';
import { isLoopbackHost } from './loopback.js';
import type { GeohookConfig } from './types.js';

/** A configured GIS server URL reached over plain http on another machine. */
export interface PlainHttpUrl {
  /** The setting that names it: ADMIN_URL, TOKEN_URL, TRUSTED_ORIGINS or `hooks.<name>.trustedOrigins`. */
  setting: string;
  /** Its origin (never its path or query). */
  origin: string;
}

const offMachineHttp = (value: string): URL | undefined => {
  const url = URL.canParse(value) ? new URL(value) : undefined;
  return url?.protocol === 'http:' && !isLoopbackHost(url.hostname) ? url : undefined;
};

/** The GIS server URLs of `config` that are plain http on a host other than this machine. */
export function plainHttpUrls(config: GeohookConfig): PlainHttpUrl[] {
  const auth = config.admin?.auth;
  const settings: [string, readonly string[]][] = [
    ['ADMIN_URL', config.admin === undefined ? [] : [config.admin.url]],
    ['TOKEN_URL', auth !== undefined && 'tokenUrl' in auth && auth.tokenUrl !== undefined ? [auth.tokenUrl] : []],
    ['TRUSTED_ORIGINS', config.trustedOrigins],
    ...[...config.hooks].map(([name, hook]): [string, readonly string[]] => [`hooks.${name}.trustedOrigins`, hook.trustedOrigins]),
  ];
  return settings.flatMap(([setting, values]) =>
    values.flatMap((value) => offMachineHttp(value) ?? []).map(({ origin }) => ({ setting, origin })),
  );
}

/**
 * Warns once, at start-up, when geohook talks to a GIS server over plain http on another machine: anyone on the
 * way can read the admin password and token, and change the answers (which name the URLs geohook reads next).
 */
export function warnPlainHttp(config: GeohookConfig, logger: Logger): void {
  const urls = plainHttpUrls(config);
  if (urls.length === 0) return;
  logger.warn(
    { urls },
    'GIS server reached over plain http: its password, token and answers can be read and changed on the way; use https',
  );
}
