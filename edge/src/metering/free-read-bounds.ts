/**
 * Free reads held to bounds of their own instead of the caller's request rate (decision 0161):
 * polls of a crawl job, and the website's own reads of the caller's quota and account on each
 * page. Counted per client network (IPv6: per /64) in fixed one-minute windows on this edge.
 */
import { clientNetwork } from '@webutil/kit';
import type { FreeReadKind } from '../route-spec.js';

/** Requests per minute per client network. */
export const FREE_READ_BOUNDS: Record<FreeReadKind, number> = { 'job-poll': 240, 'site-read': 120 };

/** Distinct client networks counted per window; past it, new ones share one count. */
const MAX_SUBJECTS = 100_000;
const MINUTE_MS = 60_000;

export class FreeReadBounds {
  private minute = -1;
  private readonly counts = new Map<string, number>();

  constructor(private readonly bounds: Record<FreeReadKind, number> = FREE_READ_BOUNDS) {}

  /** Counts one read of `clientIp`; the seconds to wait when it is past the bound. */
  hit(kind: FreeReadKind, clientIp: string, now = Date.now()): number | undefined {
    const minute = Math.floor(now / MINUTE_MS);
    if (minute !== this.minute) {
      this.minute = minute;
      this.counts.clear();
    }
    let key = `${kind}|${clientNetwork(clientIp)}`;
    if (!this.counts.has(key) && this.counts.size >= MAX_SUBJECTS) key = `${kind}|overflow`;
    const used = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, used);
    if (used <= this.bounds[kind]) return undefined;
    return Math.max(1, Math.ceil(((minute + 1) * MINUTE_MS - now) / 1000));
  }
}

/** Whether this request of the route is held to a free-read bound rather than the caller's rate. */
export function freeReadKind(kind: FreeReadKind | undefined, path: string): FreeReadKind | undefined {
  if (kind === 'site-read') return path.startsWith('/api/') ? kind : undefined;
  return kind;
}
