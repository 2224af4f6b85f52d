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
