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
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { startTestStack } from '../src/test-stack.js';
import { type DocsSite, startDocsSite } from './docs-site.js';
import { type Found, linkinator, median, ours, withoutFragment } from './link-crawls.js';
import { fmt } from './load.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

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
