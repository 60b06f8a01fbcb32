import type { RouteSpec } from '../src/route-spec.js';

/**
 * Any value a route's `call` may read from its input or caller: every property is another such
 * value (but `then`: it is not a promise).
 */
export const anything: unknown = new Proxy(() => undefined, {
  get: (_target, key) => {
    if (key === 'then') return undefined;
    return key === Symbol.toPrimitive ? () => '' : anything;
  },
});

/**
 * A route's input, for calling its `call` without a request: the fields given, the others
 * `anything`. It lists its schema's fields as its own, so a `call` that takes some fields out and
 * passes the rest on (a webhook start's) passes them all.
 */
export function inputOf(spec: RouteSpec, fields: Record<string, unknown> = {}): unknown {
  const value = (key: string | symbol) => {
    if (typeof key === 'string' && key in fields) return fields[key];
    return key === 'then' ? undefined : anything;
  };
  return new Proxy(
    {},
    {
      get: (_target, key) => value(key),
      ownKeys: () => Object.keys(spec.input.shape),
      getOwnPropertyDescriptor: (_target, key) => ({ value: value(key), enumerable: true, configurable: true }),
    },
  );
}
