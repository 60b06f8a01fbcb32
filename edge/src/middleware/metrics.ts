import { histogram } from '@webutil/kit';
import type { Middleware } from 'koa';

const requests = histogram({
  name: 'webutil_http_request_duration_seconds',
  help: 'REST requests answered by the edge, by route pattern, method and status',
  labelNames: ['route', 'method', 'status'],
  buckets: [0.005, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15, 60],
});

/** Labelled children by "route method status": prom-client would otherwise hash the labels per request. */
const requestsOf = new Map<string, ReturnType<typeof requests.labels>>();

/** Rate, errors and latency per route (the route's pattern, never the raw path, which callers choose). */
export const requestMetrics = (): Middleware => async (ctx, next) => {
  const started = performance.now();
  try {
    await next();
  } finally {
    const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
    const key = `${route} ${ctx.method} ${ctx.status}`;
    let child = requestsOf.get(key);
    if (!child) {
      // Bounded: route patterns and methods are the table's, and statuses are few.
      child = requests.labels({ route, method: ctx.method, status: String(ctx.status) });
      requestsOf.set(key, child);
    }
    child.observe((performance.now() - started) / 1000);
  }
};
