import path from 'node:path';
import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { creditsHeader, eventually, json, quota } from './billing-helpers.js';
import { type CrawlRoute, pollJob, post, startCrawl } from './crawl-helpers.js';

/** Each crawl start's price (the spec's credit table). */
const CREDITS: Record<CrawlRoute, number> = { 'broken-links': 2, 'link-extract': 1 };
/** A Starter caller's crawls queued or running at once (docs/decisions/0142-crawls-per-caller.md). */
const STARTER_BOUND = 4;
/** Each held crawl ends at this time budget, so the flooder's jobs end on their own. */
const CRAWL_BUDGET_MS = 4_000;

/**
 * Issue 22, item 6 (crawls): one caller cannot queue crawls without limit. Past its plan's bound of
 * crawls queued or running (both kinds together) a start is refused with 429 too_many_crawls and
 * Retry-After, spending nothing and storing no job; meanwhile another key's small crawl runs.
 */
describe('crawl jobs per caller', function () {
  this.timeout(120_000);
  let stack: TestStack;
  let site: FixtureSite;

  before(async () => {
    site = await startFixtureSite();
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      envFor: { crawl: { CRAWL_TIME_BUDGET_MS: String(CRAWL_BUDGET_MS) } },
    });
  });
  after(async () => {
    await stack?.stop();
    await site?.close();
  });

  /** Jobs of a caller in the crawl service's store, whatever their status. */
  const storedJobs = (caller: string) => {
    const db = new Database(path.join(stack.dataDir, 'crawl-jobs.sqlite'), { readonly: true });
    try {
      return (db.prepare('SELECT count(*) AS n FROM crawl_jobs WHERE caller = ?').get(caller) as { n: number }).n;
    } finally {
      db.close();
    }
  };

  it('refuses a Starter key’s crawls past its bound (nothing spent, no job); another key’s crawl ends', async () => {
    const flooder = await stack.admin(
      'create-account',
      '--email',
      `crawl-flood-${Date.now()}@example.test`,
      '--plan',
      'STARTER',
      '--top-up',
      '1000',
      '--rate-limit',
      '100000',
      '--mint-key',
      'flood',
    );
    const apiKey = flooder.apiKey as string;
    const before = (await quota(stack, { apiKey })).remaining;

    // 40 starts at once, both kinds, of pages that never answer: each crawl lasts its whole budget.
    const routes: CrawlRoute[] = Array.from({ length: 40 }, (_, i) => (i % 2 ? 'link-extract' : 'broken-links'));
    const answers = await Promise.all(
      routes.map((route, i) =>
        stack.api(`/v1/${route}/crawl`, { ...post({ url: site.url(`/hang?flood=${i}`) }), apiKey }),
      ),
    );
    const started = answers.flatMap((res, i) => (res.status === 202 ? [routes[i] as CrawlRoute] : []));
    const refused = answers.filter((res) => res.status !== 202);
    expect(started, 'starts let through').to.have.length(STARTER_BOUND);
    for (const res of refused) {
      const body = await json(res);
      expect(res.status, JSON.stringify(body)).to.equal(429);
      expect(body.error?.code).to.equal('too_many_crawls');
      expect(body.error?.message).to.include(String(STARTER_BOUND));
      expect(Number(res.headers.get('retry-after'))).to.be.above(0);
      creditsHeader(res);
    }

    // Another caller's small crawl is not queued behind the flood: it ends within a round of the
    // flooder's crawls (each CRAWL_BUDGET_MS), not after ten.
    const other = await startCrawl(stack, 'broken-links', site.url('/ok'));
    const { job } = await pollJob(stack, 'broken-links', other, 5 * CRAWL_BUDGET_MS);
    expect(job.status).to.equal('done');

    // Only the starts let through were billed, and only their jobs were ever stored.
    const spent = started.reduce((sum, route) => sum + CREDITS[route], 0);
    await eventually(async () => expect((await quota(stack, { apiKey })).remaining).to.equal(before - spent));
    expect(storedJobs(`account:${flooder.id}`)).to.equal(STARTER_BOUND);

    // Once its crawls have ended, the caller may start again.
    await eventually(async () => {
      const res = await stack.api('/v1/link-extract/crawl', { ...post({ url: site.url('/ok') }), apiKey });
      expect(res.status).to.equal(202);
    }, 3 * CRAWL_BUDGET_MS);
  });
});
