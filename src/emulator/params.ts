import type { FastifyRequest } from 'fastify';
import { AdminError, invalidParameter } from './admin-error.js';

/** Form fields and query parameters of an admin request; the body wins over the query. */
export class Params {
  private readonly values: Map<string, string>;

  constructor(values: Map<string, string>) {
    this.values = values;
  }

  static of(request: FastifyRequest): Params {
    const values = new Map<string, string>();
    for (const source of [request.query, request.body]) {
      if (source === null || typeof source !== 'object') continue;
      for (const [name, value] of Object.entries(source as Record<string, unknown>)) {
        const first = Array.isArray(value) ? value[0] : value;
        if (typeof first === 'string') values.set(name, first);
      }
    }
    return new Params(values);
  }

  has(name: string): boolean {
    return this.values.has(name) && this.values.get(name) !== '';
  }

  string(name: string): string | undefined {
    return this.values.get(name);
  }

  requiredString(name: string): string {
    const value = this.values.get(name)?.trim();
    if (value === undefined || value === '') throw new AdminError(400, `Missing required parameter '${name}'.`);
    return value;
  }

  boolean(name: string): boolean | undefined {
    if (!this.has(name)) return undefined;
    const value = this.values.get(name)!.trim().toLowerCase();
    if (value === 'true') return true;
    if (value === 'false') return false;
    throw invalidParameter(name, 'must be true or false');
  }

  integer(name: string, min: number, max: number): number | undefined {
    if (!this.has(name)) return undefined;
    const text = this.values.get(name)!.trim();
    const value = Number(text);
    if (!/^-?\d+$/.test(text) || value < min || value > max) {
      throw invalidParameter(name, `must be an integer from ${min} to ${max}, got '${text}'`);
    }
    return value;
  }

  /** A parameter holding JSON (objects arrive as JSON strings in form bodies). */
  json(name: string): unknown {
    if (!this.has(name)) return undefined;
    try {
      return JSON.parse(this.values.get(name)!) as unknown;
    } catch {
      throw invalidParameter(name, 'must be valid JSON');
    }
  }

  oneOf<T extends string>(name: string, allowed: readonly T[]): T | undefined {
    if (!this.has(name)) return undefined;
    const value = this.values.get(name)!.trim();
    const match = allowed.find((candidate) => candidate.toLowerCase() === value.toLowerCase());
    if (match === undefined) throw invalidParameter(name, `must be one of ${allowed.join(', ')}, got '${value}'`);
    return match;
  }
}
