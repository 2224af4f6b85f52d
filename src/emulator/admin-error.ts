/** Codes the admin API answers errors with (docs/emulator.md). */
export type AdminErrorCode = 400 | 403 | 404 | 498 | 499 | 500;

/**
 * An error of the admin API. It is answered with HTTP 200 and `{"status":"error","messages":[…],"code":N}`,
 * as the real product does; never with a stack.
 */
export class AdminError extends Error {
  readonly code: AdminErrorCode;
  readonly messages: string[];

  constructor(code: AdminErrorCode, ...messages: [string, ...string[]]) {
    super(messages.join(' '));
    this.name = 'AdminError';
    this.code = code;
    this.messages = messages;
  }

  toJSON(): { status: 'error'; messages: string[]; code: AdminErrorCode } {
    return { status: 'error', messages: this.messages, code: this.code };
  }
}

/** 400: a parameter is missing or not allowed; the message names it and what is allowed. */
export const invalidParameter = (name: string, allowed: string): AdminError =>
  new AdminError(400, `Invalid value for parameter '${name}': ${allowed}.`);
