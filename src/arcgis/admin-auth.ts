/** How a client authenticates to the admin API: a static token, or credentials exchanged for tokens renewed before expiry. */
export type AdminAuth =
  | { token: string }
  | {
      username: string;
      password: string;
      /** Where tokens come from. @defaultValue `${baseUrl}/generateToken` */
      tokenUrl?: string;
      /** Lifetime asked for each token, in minutes. @defaultValue 60 */
      expirationMinutes?: number;
    };

/**
 * {@link AdminAuth} whose credentials name their token URL: the password goes there and nowhere else. It comes
 * from configuration (`adminAuthFor`, or the caller's own `tokenUrl`), never from an event or an answer.
 */
export type ResolvedAdminAuth = { token: string } | (Extract<AdminAuth, { username: string }> & { tokenUrl: string });

/** True when `auth` is a static token or credentials that name their token URL. */
export const isResolvedAuth = (auth: AdminAuth): auth is ResolvedAdminAuth => 'token' in auth || auth.tokenUrl !== undefined;
