import { unexpected } from '../arcgis-request/check-response.js';

type JsonObject = Record<string, unknown>;

/** `body[key]` as an array, or an `AdminApiError` naming what is missing. */
export function arrayField<T>(body: JsonObject, key: string, url: string): T[] {
  const value = body[key];
  if (!Array.isArray(value)) throw unexpected(url, `'${key}' array`, body);
  return value as T[];
}

/** `body[key]` as an object (a JSON string holding one is parsed), or an `AdminApiError`. */
export function objectField<T>(body: JsonObject, key: string, url: string): T {
  let value = body[key];
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value) as unknown;
    } catch {
      throw unexpected(url, `'${key}' object`, body);
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw unexpected(url, `'${key}' object`, body);
  return value as T;
}

/** The record of an answer without its `status` (`success`). */
export function withoutStatus<T>(body: JsonObject): T {
  const { status: _status, ...record } = body;
  return record as T;
}

/** A webhook answer (create, get, edit) without `status`; one without an `id` is an `AdminApiError`. */
export function webhookOf<T>(body: JsonObject, url: string): T {
  if (typeof body.id !== 'string') throw unexpected(url, 'webhook id', body);
  return withoutStatus<T>(body);
}
