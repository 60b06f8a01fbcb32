/**
 * The two broken-link crawls the crawl benchmarks compare: ours (the broken-link crawl job through
 * the edge, fragments checked) and linkinator's CLI (--recurse --check-fragments) in a process of
 * its own, as a user runs it; each with what it found missing.
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { TestStack } from '../src/test-stack.js';

/** The package's `bin` (its exports do not include it): beside its entry point. */
const LINKINATOR_CLI = path.join(path.dirname(createRequire(import.meta.url).resolve('linkinator')), 'cli.js');

export interface Found {
  ms: number;
  /** linkinator's status for each URL it called broken (0: no answer). */
  statuses?: Map<string, number>;
  pages: number;
  /** Missing URLs (fragment aside), and missing fragments as url#fragment. */
  missing: Set<string>;
  fragments: Set<string>;
}

export const withoutFragment = (url: string) => url.split('#')[0] as string;
export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

/** A call to the edge as a client makes it: the stack's API key, no contract validation. */
export function call(stack: TestStack, path: string, init: RequestInit = {}): Promise<Response> {
  const headers = { ...(init.headers as Record<string, string>), authorization: `Bearer ${stack.apiKey}` };
  return fetch(`${stack.edgeUrl}${path}`, { ...init, headers });
}

export async function ours(
  stack: TestStack,
  url: string,
  options: Record<string, unknown> = {},
): Promise<Found & { result: any }> {
  const started = performance.now();
  const res = await call(stack, '/v1/broken-links/crawl', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url, checkFragments: true, ...options }),
  });
  const start = (await res.json()) as any;
  if (res.status !== 202) throw new Error(`crawl start: ${res.status} ${JSON.stringify(start.error)}`);
  let job: any;
  for (;;) {
    const poll = await call(stack, `/v1/broken-links/crawl/${start.data.jobId}`);
    // Polls have their own bound (240 a minute): a long crawl's polls wait out a 429.
    const wait = poll.status === 429 ? Number(poll.headers.get('retry-after') ?? 1) * 1000 : 50;
    job = ((await poll.json()) as any).data ?? job;
    if (poll.status !== 429 && job.status !== 'crawling') break;
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
  const ms = performance.now() - started;
  if (job.status !== 'done') throw new Error(`crawl ended ${job.status}: ${JSON.stringify(job.error)}`);
  const links: any[] = job.result.links;
  const fragments = new Set<string>();
  for (const link of links) {
    if (link.category !== 'Missing anchor') continue;
    if (link.type === 'anchor') fragments.add(link.url);
    for (const f of link.fragments ?? []) if (!f.found) fragments.add(`${link.url}#${f.fragment}`);
  }
  return {
    ms,
    pages: job.result.pagesCrawled,
    missing: new Set(links.filter((l) => l.severity === 'broken').map((l) => withoutFragment(l.url))),
    fragments,
    result: job.result,
  };
}

/** linkinator's CLI in a process of its own, as a user runs it; exit code 1 means it found broken links. */
export function linkinator(url: string, extraArgs: string[] = []): Promise<Found> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [LINKINATOR_CLI, url, '--recurse', '--check-fragments', '--format', 'json', '--timeout', '10000', ...extraArgs],
      { maxBuffer: 256 * 1024 * 1024 },
      (err, stdout) => {
        const ms = performance.now() - started;
        if (err && !stdout) return reject(err);
        const out = JSON.parse(stdout) as { links: { url: string; state: string; status?: number; parent?: string }[] };
        const broken = out.links.filter((l) => l.state === 'BROKEN');
        resolve({
          ms,
          statuses: new Map(broken.map((l) => [l.url, l.status ?? 0])),
          pages: new Set(out.links.map((l) => l.parent).filter(Boolean)).size,
          missing: new Set(broken.filter((l) => !l.url.includes('#')).map((l) => l.url)),
          fragments: new Set(broken.filter((l) => l.url.includes('#')).map((l) => l.url)),
        });
      },
    );
  });
}
