import { type CrawlSite, startCrawlSite } from '@webutil/scripts/fixture-crawl-site';
import { removeStreams, SHARED_NATS_URL, uniquePrefix } from '@webutil/scripts/nats-under-test';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { account, eventually, json, quota } from './billing-helpers.js';
import { crawlEnds, post } from './crawl-helpers.js';

/** What the issue asks: another replica resumes a dead replica's job within 5 s (ack wait 4 s). */
const RESUME_MS = 5_000;
/** Slack for a loaded, shared test machine; the figure measured is printed and recorded in docs. */
const RESUME_SLACK_MS = 4_000;

/**
 * Issue 29, item 2: two crawl replicas on one JetStream work queue; the one running a crawl is
 * SIGKILLed mid-crawl. The other resumes the job within the ack wait (in-progress acks keep a live
 * job from being redelivered), the job ends done once, and the start is charged once.
 */
describe('a crawl whose replica dies mid-crawl', function () {
  this.timeout(180_000);
  const prefix = uniquePrefix();
  let stack: TestStack;
  let site: CrawlSite;

  before(async () => {
    site = await startCrawlSite({ pages: 120, latencyMs: 100, silentHost: false, rateLimited: false });
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      env: { NATS_URL: SHARED_NATS_URL, CRAWL_NATS_PREFIX: prefix },
      replicas: { crawl: 2 },
    });
  });
  after(async () => {
    await stack?.stop();
    await site?.close();
    await removeStreams(SHARED_NATS_URL, prefix).catch(() => undefined);
  });

  /** The replicas that logged `crawl started` for this job, with the attempt and when it was seen. */
  const startsOf = (jobId: string) =>
    stack.logs.flatMap((line) => {
      const match = /^\[(crawl(?:-2)?)\] (.*)$/.exec(line);
      if (!match?.[2]?.includes(jobId) || !match[2].includes('crawl started')) return [];
      const entry = JSON.parse(match[2]) as { attempt: number };
      return [{ replica: match[1] as string, attempt: entry.attempt }];
    });

  it('is resumed by the other replica within seconds, ends done once and is charged once', async () => {
    const { apiKey } = await account(stack, 'STARTER', '--top-up', '100');
    const before = (await quota(stack, { apiKey })).remaining;
    const res = await stack.api('/v1/broken-links/crawl', { ...post({ url: site.entryUrl }), apiKey });
    const started = await json(res);
    expect(res.status, JSON.stringify(started)).to.equal(202);
    const jobId = started.data.jobId as string;

    // Mid-crawl: some pages crawled, far from all.
    await eventually(async () => {
      const { data } = await json(await stack.api(`/v1/broken-links/crawl/${jobId}`, { apiKey }));
      expect(data.progress.pagesScanned ?? data.progress.pagesCrawled).to.be.above(2);
    }, 60_000);
    const [first] = startsOf(jobId);
    expect(first, 'a replica logged the start of the crawl').to.not.equal(undefined);
    const victim = first?.replica as string;
    const killedAt = Date.now();
    await stack.kill(victim);

    const resumed = await eventually(async () => {
      const other = startsOf(jobId).find((s) => s.replica !== victim);
      expect(other, 'the other replica took the job').to.not.equal(undefined);
      return { ...other, afterMs: Date.now() - killedAt };
    }, 60_000);
    process.stdout.write(`      resumed by ${resumed.replica} ${resumed.afterMs} ms after the SIGKILL\n`);
    expect(resumed.afterMs).to.be.below(RESUME_MS + RESUME_SLACK_MS);
    expect(resumed.attempt).to.equal(2);

    const done = await eventually(async () => {
      const { data } = await json(await stack.api(`/v1/broken-links/crawl/${jobId}`, { apiKey }));
      expect(data.status).to.not.equal('crawling');
      return data;
    }, 120_000);
    expect(done.status, JSON.stringify(done.error)).to.equal('done');
    expect(await crawlEnds(stack, jobId), 'one end of the job').to.have.length(1);
    // Charged once: the start's 2 credits, nothing for the resumed attempt.
    expect((await quota(stack, { apiKey })).remaining).to.equal(before - 2);
  });
});
