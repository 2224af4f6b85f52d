/** What replaces a secret in errors. */
export const REDACTED = '[redacted]';

/**
 * Secrets shorter than this are left alone: replacing a one-letter test token would mangle every message, and
 * real tokens are far longer.
 */
export const MIN_REDACTED_LENGTH = 8;

/** `text` with every occurrence of each secret replaced. */
export function redactText(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of secrets) if (secret.length >= MIN_REDACTED_LENGTH) result = result.split(secret).join(REDACTED);
  return result;
}

/** A copy of a parsed JSON value with the secrets redacted from every string in it (keys included). */
export function redactValue(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === 'string') return redactText(value, secrets);
  if (Array.isArray(value)) return value.map((item) => redactValue(item, secrets));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [redactText(key, secrets), redactValue(item, secrets)]));
  }
  return value;
}

/** `url` without a `token` query parameter (the client never puts one there; a base URL might). */
export function urlWithoutToken(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.searchParams.has('token')) return url;
    parsed.searchParams.delete('token');
    return parsed.toString();
  } catch {
    return url;
  }
}

/** The path of `url`, for error messages. */
export function pathOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return url.split('?')[0] ?? url;
  }
}
