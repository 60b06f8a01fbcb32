/**
 * Issue 28 benchmark: a generated documentation site (docs-site.ts: 8 x 40 doc pages, 8 section
 * pages and a home page; tables of contents of fragment links on every page, cross-page fragment
 * links, images, scripts, stylesheets, known missing pages, images, a script and fragments, a
 * robots.txt with Disallow rules), crawled by us (the broken-link crawl through the edge, fragments
 * checked, caps lifted so every page is crawled) and by linkinator's CLI (--recurse
 * --check-fragments, its default concurrency of 100), alternating, in the same run:
 *  1. the site with links to a second (reference) host;
 *  2. the same site alone: one fast host;
 * each BENCH_ROUNDS times (medians; the CLI timed as a process, Node's start included, as a user
 * meets it), every answer delayed 2 ms (so the host can count the requests it has in flight). What
 * each found missing is listed and the differences explained.
 *  3. the crawl service's peak RSS (VmHWM) over all of it;
 *  4. adaptive per-host concurrency (decision 0218): a small copy of the site on a fast host, on a
 *     slow one (every answer past the 1 s "slow" mark) and on one that answers 503 (Retry-After: 1)
 *     for its first 1.5 s: the crawl's time and the most requests the host had in flight at once.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { startTestStack, type TestStack } from '../src/test-stack.js';
import { type DocsSite, startDocsSite } from './docs-site.js';
import { fmt } from './load.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** The package's `bin` (its exports do not include it): beside its entry point. */
const LINKINATOR_CLI = path.join(path.dirname(createRequire(import.meta.url).resolve('linkinator')), 'cli.js');

interface Found {
  ms: number;
  /** linkinator's status for each URL it called broken (0: no answer). */
  statuses?: Map<string, number>;
  pages: number;
  /** Missing URLs (fragment aside), and missing fragments as url#fragment. */
  missing: Set<string>;
  fragments: Set<string>;
}

const withoutFragment = (url: string) => url.split('#')[0] as string;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

/** A call to the edge as a client makes it: the stack's API key, no contract validation. */
function call(stack: TestStack, path: string, init: RequestInit = {}): Promise<Response> {
  const headers = { ...(init.headers as Record<string, string>), authorization: `Bearer ${stack.apiKey}` };
  return fetch(`${stack.edgeUrl}${path}`, { ...init, headers });
}

async function ours(stack: TestStack, url: string): Promise<Found & { result: any }> {
  const started = performance.now();
  const res = await call(stack, '/v1/broken-links/crawl', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url, checkFragments: true }),
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
function linkinator(url: string): Promise<Found> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [LINKINATOR_CLI, url, '--recurse', '--check-fragments', '--format', 'json', '--timeout', '10000'],
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

const kind = (url: string) =>
  /\/img\//.test(url)
    ? 'image'
    : /\.js$/.test(url)
      ? 'script'
      : /\.css$/.test(url)
        ? 'stylesheet'
        : /\/ref\//.test(url)
          ? 'reference'
          : 'page';

/** What each found missing, by kind, and every difference with its explanation. */
function compare(site: DocsSite, a: Found & { result: any }, b: Found): string[] {
  const lines: string[] = [];
  const kinds = ['page', 'image', 'script', 'stylesheet', 'reference'];
  for (const k of kinds) {
    const mine = [...a.missing].filter((u) => kind(u) === k);
    const theirs = [...b.missing].filter((u) => kind(u) === k);
    if (mine.length + theirs.length === 0) continue;
    lines.push(`missing ${k}s: ours ${mine.length}, linkinator ${theirs.length}`);
  }
  lines.push(`missing fragments: ours ${a.fragments.size}, linkinator ${b.fragments.size}`);
  // Our record of a URL itself (not the in-page anchors of the page it names).
  const records = new Map<string, any>(
    a.result.links.filter((l: any) => l.type !== 'anchor').map((l: any) => [l.url, l]),
  );
  const pageRows = new Map<string, any>(a.result.pages.map((p: any) => [p.url, p]));
  const why = (url: string): string => {
    if (site.expected.behindDisallowed.includes(url)) return 'linked only from a page robots.txt disallows';
    const row = pageRows.get(url);
    if (row?.reason) return `ours: ${row.reason}`;
    const r = records.get(withoutFragment(url));
    if (!r) return kind(url) === 'page' ? 'ours: not reached' : 'ours: not checked (not an anchor link)';
    if (url.includes('#'))
      return `ours: the page is ${r.severity}; its fragments verified: ${JSON.stringify(r.fragments ?? [])}`;
    return `ours: ${r.severity}, ${r.category}`;
  };
  const theirStatus = (u: string) => `linkinator: status ${b.statuses?.get(u) ?? '?'}`;
  // Past a dozen, differences of one explanation are counted, not listed.
  const list = (label: string, urls: string[], explain: (u: string) => string) => {
    const byReason = new Map<string, string[]>();
    for (const u of urls) byReason.set(explain(u), [...(byReason.get(explain(u)) ?? []), u]);
    for (const [reason, group] of byReason) {
      for (const u of group.slice(0, 12)) lines.push(`  ${label}: ${u} (${reason})`);
      if (group.length > 12) lines.push(`  ${label}: ... and ${group.length - 12} more (${reason})`);
    }
  };
  list(
    'only ours',
    [...a.missing].filter((x) => !b.missing.has(x)),
    () => 'linkinator: not broken',
  );
  list(
    'only linkinator',
    [...b.missing].filter((x) => !a.missing.has(x)),
    (u) => `${why(u)}; ${theirStatus(u)}`,
  );
  list(
    'fragment only ours',
    [...a.fragments].filter((x) => !b.fragments.has(x)),
    () => 'linkinator: not broken',
  );
  list(
    'fragment only linkinator',
    [...b.fragments].filter((x) => !a.fragments.has(x)),
    (u) => why(u),
  );
  const expected = [
    ...site.expected.missingPages,
    ...site.expected.missingImages,
    ...site.expected.missingScripts,
    ...site.expected.missingReference,
  ];
  const unseen = expected.filter((u) => !a.missing.has(u));
  lines.push(
    unseen.length ? `  known missing we did not report: ${unseen.join(', ')}` : '  we reported every known missing URL',
  );
  return lines;
}

function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? Number.NaN) / 1024;
}

console.log(`\n== docs-site benchmark (issue 28): linkinator 7.6.1 CLI on Node ${process.version} ==`);
console.log(
  `load average at the start: ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(', ')} (${os.cpus().length} cores)`,
);
const stack = await startTestStack({
  allowTargets: '127.0.0.0/8',
  env: { LOG_LEVEL: 'warn', CRAWL_MAX_PAGES: '100000', CRAWL_MAX_CHECKED_LINKS: '100000' },
});
try {
  for (const [label, reference] of [
    ['docs site + a reference host', true],
    ['one fast host (the docs site alone)', false],
  ] as const) {
    const site = await startDocsSite({ reference, latencyMs: 2 });
    try {
      // Both tools meet a warmed site: one crawl of ours first (the fresh service's compile and
      // connection set-up), reported on its own.
      const first = await ours(stack, site.entryUrl);
      const mine: (Found & { result: any })[] = [];
      const theirs: Found[] = [];
      const peaks = { ours: 0, linkinator: 0 };
      for (let round = 0; round < ROUNDS; round++) {
        site.main.peakInFlight = 0;
        mine.push(await ours(stack, site.entryUrl));
        peaks.ours = Math.max(peaks.ours, site.main.peakInFlight);
        site.main.peakInFlight = 0;
        theirs.push(await linkinator(site.entryUrl));
        peaks.linkinator = Math.max(peaks.linkinator, site.main.peakInFlight);
        process.stderr.write(
          `${label}, round ${round + 1}: ours ${fmt(mine.at(-1)!.ms)} ms, linkinator ${fmt(theirs.at(-1)!.ms)} ms\n`,
        );
      }
      const [a, b] = [median(mine.map((m) => m.ms)), median(theirs.map((m) => m.ms))];
      console.log(`${label}: ${site.pages} pages${reference ? ', 2 hosts' : ''} (medians of ${ROUNDS})`);
      console.log(
        `  ours ${fmt(a)} ms, linkinator CLI ${fmt(b)} ms: ours ${fmt(b / a, 2)}x as fast` +
          ` (our first crawl on the fresh service: ${fmt(first.ms)} ms)`,
      );
      const last = mine.at(-1)!;
      const listed = last.result.pages.length - last.pages;
      console.log(
        `  pages crawled: ours ${last.pages} (+${listed} listed, not fetched: robots.txt), ` +
          `linkinator ${theirs.at(-1)!.pages} (it does not read robots.txt)`,
      );
      for (const line of compare(site, last, theirs.at(-1)!)) console.log(`  ${line}`);
      console.log(
        `  the host's most requests in flight at once: ours ${peaks.ours} (adaptive), linkinator ${peaks.linkinator}`,
      );
    } finally {
      await site.close();
    }
  }
  const pid = stack.pid('crawl');
  if (pid !== undefined) console.log(`peak RSS of the crawl service over these crawls: ${fmt(peakRssMb(pid))} MB`);

  console.log('adaptive per-host concurrency (initial 4, ceiling 64), each a fresh host:');
  for (const [label, options] of [
    ['fast host (5 ms per answer, 4 x 10 pages)', { sections: 4, perSection: 10, latencyMs: 5 }],
    ['slow host (1,100 ms per answer, 2 x 5 pages)', { sections: 2, perSection: 5, latencyMs: 1_100 }],
    [
      '503 (Retry-After: 1) for its first 1.5 s, then 5 ms per answer (4 x 10 pages)',
      { sections: 4, perSection: 10, latencyMs: 5, unavailableForMs: 1_500 },
    ],
  ] as const) {
    const site = await startDocsSite(options);
    try {
      const found = await ours(stack, site.entryUrl);
      console.log(
        `  ${label}: ${fmt(found.ms)} ms, ${site.main.requests} requests, most in flight at once ` +
          `${site.main.peakInFlight}, answered 503: ${site.main.unavailable}, ` +
          `pages crawled ${found.pages}, broken ${found.missing.size}`,
      );
    } finally {
      await site.close();
    }
  }
  console.log(
    `load average at the end: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(', ')}`,
  );
} finally {
  await stack.stop();
}
