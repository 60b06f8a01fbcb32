import { type MatchResult, Router } from '@koa/router';

/** Distinct paths remembered at most: a bound whatever paths callers send. */
const REMEMBERED_PATHS = 1024;

/**
 * @koa/router tests every route's pattern on every request, over sixty here. A path matched only
 * by routes without parameters (the quota read, the scans) gets the same answer every time, so it
 * is worked out once. Every route is registered before the first request, so no answer goes stale.
 */
export class EdgeRouter extends Router {
  private readonly fixedPaths = new Map<string, MatchResult>();

  override match(path: string, method: string): MatchResult {
    // Routing ignores case by default: `/V1/QUOTA` is the same entry as `/v1/quota`, so callers
    // cannot fill the table with spellings of one path.
    const key = `${method} ${this.opts.sensitive ? path : path.toLowerCase()}`;
    const known = this.fixedPaths.get(key);
    // The router hands `path` on as ctx.matched: each request gets its own array.
    if (known) return { ...known, path: [...known.path] };
    const found = super.match(path, method);
    const fixed = found.route && found.path.every((layer) => layer.paramNames.length === 0);
    if (fixed && this.fixedPaths.size < REMEMBERED_PATHS) this.fixedPaths.set(key, { ...found, path: [...found.path] });
    return found;
  }
}
