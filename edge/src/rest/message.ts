/**
 * The one rule from a ts-proto message to the spec's JSON, read off the route's response schema:
 * only the schema's fields are written, in its order; an absent optional field becomes null where
 * the schema says nullable and is omitted where it says optional; an int64 (a string, as ts-proto
 * is configured) becomes a number. A required field the reply lacks is a service bug: a 500.
 */
import { z } from 'zod';

/**
 * What may be presented as T: a ts-proto message, with plain strings for enums, int64 as strings,
 * and any field possibly absent (ts-proto makes every message-typed field optional); whether an
 * absent field is allowed is the schema's call, at run time.
 */
export type Presentable<T> = T extends string
  ? string
  : T extends number
    ? number | string
    : T extends boolean
      ? boolean
      : T extends readonly (infer E)[]
        ? readonly Presentable<E>[]
        : T extends object
          ? { [K in keyof T]?: Presentable<NonNullable<T[K]>> | null }
          : T;

const OMIT = Symbol('omit');
type Shaper = (value: unknown) => unknown;

/** Compiles the schema's shaping once; the returned function presents one reply. */
export function presenter<T>(schema: z.ZodType<T>): (reply: Presentable<T>) => T {
  return compile(schema, '') as (reply: Presentable<T>) => T;
}

/** `path` (e.g. `.links[].url`) is fixed when compiling, so presenting allocates no names. */
function compile(schema: z.ZodType, path: string): Shaper {
  if (schema instanceof z.ZodOptional) {
    const inner = compile(schema.unwrap() as z.ZodType, path);
    return (value) => (value === undefined || value === null ? OMIT : inner(value));
  }
  if (schema instanceof z.ZodNullable) {
    const inner = compile(schema.unwrap() as z.ZodType, path);
    return (value) => (value === undefined || value === null ? null : inner(value));
  }
  if (schema instanceof z.ZodObject) {
    const entries = Object.entries(schema.shape as Record<string, z.ZodType>);
    const keys = entries.map(([key]) => key);
    const shapes = entries.map(([key, field]) => compile(field, `${path}.${key}`));
    return (value) => {
      if (typeof value !== 'object' || value === null) throw missing(path);
      const record = value as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i] as string;
        const shaped = (shapes[i] as Shaper)(record[key]);
        if (shaped !== OMIT) out[key] = shaped;
      }
      return out;
    };
  }
  if (schema instanceof z.ZodArray) {
    const element = compile(schema.element as z.ZodType, `${path}[]`);
    return (value) => {
      if (!Array.isArray(value)) throw missing(path);
      return value.map(element);
    };
  }
  if (schema instanceof z.ZodNumber) {
    return (value) => {
      if (typeof value === 'string' && value !== '') return Number(value);
      if (typeof value !== 'number') throw missing(path);
      return value;
    };
  }
  // Strings, booleans, enums, literals, and unions (whose presenter builds the member) pass as they are.
  return (value) => {
    if (value === undefined) throw missing(path);
    return value;
  };
}

const missing = (path: string) => new Error(`the service reply has no ${path.slice(1) || 'value'}`);
