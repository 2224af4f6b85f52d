import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { EmulatorRole, EmulatorUser } from '../config/load-config.js';
import { AdminError } from './admin-error.js';
import type { Clock } from './clock.js';

/** The built-in users: admin (administrator), orgadmin (organisation administrator) and viewer (no role). */
export const defaultUsers: readonly EmulatorUser[] = [
  { username: 'admin', password: 'admin.pass', role: 'administrator' },
  { username: 'orgadmin', password: 'orgadmin.pass', role: 'orgadmin' },
  { username: 'viewer', password: 'viewer.pass', role: 'none' },
];

const sameText = (a: string, b: string): boolean => {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
};

/** Issues and checks tokens, with expiry on the emulator clock. */
export class TokenStore {
  private readonly users: readonly EmulatorUser[];
  private readonly clock: Clock;
  private readonly tokens = new Map<string, { user: EmulatorUser; expires: number }>();
  private readonly lifetimeMs: number | undefined;

  /** `tokenSeconds`: the lifetime of every token issued, whatever `expiration` asks (EMULATOR_TOKEN_SECONDS). */
  constructor(users: readonly EmulatorUser[], clock: Clock, tokenSeconds?: number) {
    this.users = users;
    this.clock = clock;
    this.lifetimeMs = tokenSeconds === undefined ? undefined : tokenSeconds * 1000;
  }

  /** `generateToken`: a token valid for `expirationMinutes` (or the emulator's token lifetime), or undefined for wrong credentials. */
  generate(username: string, password: string, expirationMinutes: number): { token: string; expires: number } | undefined {
    const user = this.users.find((candidate) => candidate.username === username);
    if (user === undefined || !sameText(user.password, password)) return undefined;
    const token = randomBytes(24).toString('base64url');
    const expires = this.clock.now() + (this.lifetimeMs ?? expirationMinutes * 60_000);
    this.tokens.set(token, { user, expires });
    return { token, expires };
  }

  /** A token of the known user `username` valid for `expirationMinutes`, as an app signed in as that user holds; undefined for an unknown user. */
  issue(username: string, expirationMinutes: number): string | undefined {
    const user = this.users.find((candidate) => candidate.username === username);
    return user === undefined ? undefined : this.generate(user.username, user.password, expirationMinutes)?.token;
  }

  /** Makes every token issued so far expired: each answers 498 from now on. Returns how many there were. */
  expireAll(): number {
    const now = this.clock.now();
    for (const entry of this.tokens.values()) entry.expires = Math.min(entry.expires, now);
    return this.tokens.size;
  }

  /** The user behind `token`, or a 499 (missing) / 498 (invalid or expired) admin error. */
  authenticate(token: string | undefined): EmulatorUser {
    if (token === undefined || token === '') {
      throw new AdminError(499, "Unauthorized access. Token not found. You can generate a token using the 'generateToken' operation.");
    }
    const entry = this.tokens.get(token);
    if (entry === undefined) throw new AdminError(498, 'Invalid token.');
    if (entry.expires <= this.clock.now()) {
      this.tokens.delete(token);
      throw new AdminError(498, 'Invalid token.', 'Token has expired.');
    }
    return entry.user;
  }
}

/** 403 unless `user` has one of `roles`. */
export function requireRole(user: EmulatorUser, roles: readonly EmulatorRole[], operation: string): void {
  if (!roles.includes(user.role)) {
    throw new AdminError(403, `User '${user.username}' is not authorized to perform '${operation}'. Required role: ${roles.join(' or ')}.`);
  }
}
