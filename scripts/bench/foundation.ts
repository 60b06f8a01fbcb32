/**
 * Issue 2 benchmark. Everything is measured in this run against its own baseline:
 *  1. link-extract of a 5,000-link fixture page through the edge: requests per second;
 *  2. parse time of that page: our streaming LinkCollector against cheerio's extraction;
 *  3. edge overhead: down-check of a fixture through the edge against a direct undici request
 *     to the same fixture, p50/p99 at 50 concurrent requests, in three rounds (median ratio), and the
 *     CPU per call of every process it crosses (edge, billing, meta-scan, fixture site, load generator).
 * The fixture site runs in a process of its own, so the load generator has this one to itself.
 */

import { readFileSync } from 'node:fs';
import { LinkCollector } from '@webutil/crawl';
import * as cheerio from 'cheerio';
import { startTestStack } from '../src/test-stack.js';
import { fmt, type LoadResult, load } from './load.js';
import { startSiteProcess } from './site-process.js';

const DURATION = Number(process.env.BENCH_DURATION_MS ?? 8000);
const ROUNDS = 3;
const WARMUP_MS = 3000;

const site = await startSiteProcess();
const stack = await startTestStack({ allowTargets: '127.0.0.0/8', env: { LOG_LEVEL: 'warn' } });
const auth: Record<string, string> =
  'apiKey' in stack && typeof stack.apiKey === 'string' ? { authorization: `Bearer ${stack.apiKey}` } : {};
try {
  const pageUrl = site.url('/links?n=4500&external=500');
  const html = await (await fetch(pageUrl)).text();

  // 1. Throughput of link-extract through the edge.
  const extract = await load(`${stack.edgeUrl}/v1/link-extract?url=${encodeURIComponent(pageUrl)}`, {
    concurrency: 8,
    durationMs: DURATION,
    headers: auth,
  });

  // 2. Parse time, same HTML, same process.
  const rounds = 60;
  const ours = () => {
    const collector = new LinkCollector(new URL(pageUrl), 5000);
    collector.write(html);
    collector.end();
    return collector.links.length;
  };
  const theirs = () => {
    const $ = cheerio.load(html);
    const base = new URL(pageUrl);
    return $('a[href]')
      .map((_, el) => ({
        url: new URL($(el).attr('href') ?? '', base).href,
        text: $(el).text().trim(),
        rel: $(el).attr('rel') ?? null,
      }))
      .get().length;
  };
  const time = (fn: () => number) => {
    for (let i = 0; i < 5; i++) fn();
    const started = performance.now();
    let links = 0;
    for (let i = 0; i < rounds; i++) links = fn();
    return { ms: (performance.now() - started) / rounds, links };
  };
  const oursParse = time(ours);
  const cheerioParse = time(theirs);

  // 3. Edge overhead on the cheapest route: rounds of direct and through-the-edge in turn, each
  // after its own warm-up (the edge's path runs unoptimised for its first thousand calls or so).
  const downCheckUrl = `${stack.edgeUrl}/v1/down-check?url=${encodeURIComponent(site.url('/ok'))}`;
  // Every process a metered down-check crosses: CPU per call holds under the machine's load far
  // better than the latency ratio does (issue 35).
  const pids: Record<string, number | undefined> = {
    edge: stack.pid('edge'),
    billing: stack.pid('billing'),
    'meta-scan': stack.pid('meta-scan'),
    site: site.pid,
    'load generator': process.pid,
  };
  const downChecks: Array<{ direct: LoadResult; viaEdge: LoadResult; cpu: Record<string, number> }> = [];
  for (let round = 0; round < ROUNDS; round++) {
    const direct = await load(site.url('/ok'), { concurrency: 50, durationMs: DURATION, warmupMs: WARMUP_MS });
    await load(downCheckUrl, { concurrency: 50, durationMs: WARMUP_MS, headers: auth });
    const cpuBefore = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuMs(pid)]));
    const viaEdge = await load(downCheckUrl, { concurrency: 50, durationMs: DURATION, headers: auth, warmupMs: 0 });
    // CPU each process spent per metered request during that run.
    const cpu = Object.fromEntries(
      Object.entries(pids).map(([name, pid]) => [
        name,
        (cpuMs(pid) - (cpuBefore[name] ?? 0)) / (viaEdge.requests + viaEdge.errors),
      ]),
    );
    downChecks.push({ direct, viaEdge, cpu });
  }
  const ratios = downChecks.map((r) => r.viaEdge.p50 / r.direct.p50);
  const medianRound = downChecks[ratios.indexOf(median(ratios))];

  console.log('\n== foundation benchmark (issue 2) ==');
  console.log(
    `link-extract, 5,000-link page, 8 connections through the edge: ${fmt(extract.rps)} req/s, ` +
      `p50 ${fmt(extract.p50)} ms, p99 ${fmt(extract.p99)} ms, errors ${extract.errors}`,
  );
  console.log(
    `parse of that page: ours ${fmt(oursParse.ms, 2)} ms (${oursParse.links} links), ` +
      `cheerio ${fmt(cheerioParse.ms, 2)} ms (${cheerioParse.links} links) ` +
      `-> ours is ${fmt(cheerioParse.ms / oursParse.ms, 2)}x faster`,
  );
  for (const [i, { direct, viaEdge }] of downChecks.entries()) {
    console.log(
      `down-check at 50 concurrent, round ${i + 1}: direct undici p50 ${fmt(direct.p50, 2)} ms ` +
        `p99 ${fmt(direct.p99, 2)} ms (${fmt(direct.rps)} req/s); through the edge p50 ${fmt(viaEdge.p50, 2)} ms ` +
        `p99 ${fmt(viaEdge.p99, 2)} ms (${fmt(viaEdge.rps)} req/s, errors ${viaEdge.errors}) -> ` +
        `p50 ${fmt(viaEdge.p50 / direct.p50, 2)}x, p99 ${fmt(viaEdge.p99 / direct.p99, 2)}x`,
    );
  }
  console.log(`edge/direct latency ratio, median of ${ROUNDS} rounds: p50 ${fmt(median(ratios), 2)}x`);
  if (medianRound) {
    const { edge = 0, billing = 0, ...others } = medianRound.cpu;
    console.log(
      `CPU per metered down-check (that round): edge ${fmt(edge, 2)} ms + billing ${fmt(billing, 2)} ms ` +
        `= ${fmt(edge + billing, 2)} ms; ${Object.entries(others)
          .map(([name, ms]) => `${name} ${fmt(ms, 2)} ms`)
          .join(', ')}`,
    );
  }
} finally {
  await stack.stop();
  await site.stop();
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? Number.NaN;
}

/** User + system CPU milliseconds of a process so far, from /proc (clock ticks of 10 ms). */
function cpuMs(pid: number | undefined): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}
