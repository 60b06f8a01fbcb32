import { type MatchResult, Router } from '@koa/router';

/** Distinct paths remembered at most (routing is case-insensitive, so callers choose how many variants exist). */
const REMEMBERED_PATHS = 1024;

/**
 * @koa/router tests every route's pattern on every request, over sixty here. A path matched only
 * by routes without parameters (the quota read, the scans) gets the same answer every time, so it
 * is worked out once. Every route is registered before the first request, so no answer goes stale.
 */
export class EdgeRouter extends Router {
  private readonly fixedPaths = new Map<string, MatchResult>();

  override match(path: string, method: string): MatchResult {
    const key = `${method} ${path}`;
    const known = this.fixedPaths.get(key);
    // The router hands `path` on as ctx.matched: each request gets its own array.
    if (known) return { ...known, path: [...known.path] };
    const found = super.match(path, method);
    const fixed = found.route && found.path.every((layer) => layer.paramNames.length === 0);
    if (fixed && this.fixedPaths.size < REMEMBERED_PATHS) this.fixedPaths.set(key, { ...found, path: [...found.path] });
    return found;
  }
}
