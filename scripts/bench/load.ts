import { Pool } from 'undici';

export interface LoadResult {
  requests: number;
  errors: number;
  rps: number;
  p50: number;
  p99: number;
}

/**
 * Closed-loop load: `concurrency` workers send GET requests back to back over one keep-alive
 * pool for `durationMs`, after a short warm-up. Latencies in milliseconds.
 */
export async function load(
  url: string,
  opts: { concurrency: number; durationMs: number; headers?: Record<string, string>; warmupMs?: number },
): Promise<LoadResult> {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections: opts.concurrency, pipelining: 1 });
  const path = target.pathname + target.search;
  const latencies: number[] = [];
  let errors = 0;
  const run = async (until: number, record: boolean) => {
    while (performance.now() < until) {
      const started = performance.now();
      try {
        const res = await pool.request({ method: 'GET', path, headers: opts.headers });
        await res.body.dump();
        if (res.statusCode >= 400) errors += record ? 1 : 0;
      } catch {
        errors += record ? 1 : 0;
      }
      if (record) latencies.push(performance.now() - started);
    }
  };
  const warmupUntil = performance.now() + (opts.warmupMs ?? 1000);
  await Promise.all(Array.from({ length: opts.concurrency }, () => run(warmupUntil, false)));
  const started = performance.now();
  const until = started + opts.durationMs;
  await Promise.all(Array.from({ length: opts.concurrency }, () => run(until, true)));
  const elapsed = performance.now() - started;
  await pool.close();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  return { requests: latencies.length, errors, rps: (latencies.length / elapsed) * 1000, p50: at(0.5), p99: at(0.99) };
}

export const fmt = (n: number, digits = 1) => n.toFixed(digits);
