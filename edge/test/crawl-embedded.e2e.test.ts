import { type CrawlSite, startCrawlSite } from '@webutil/scripts/fixture-crawl-site';
import { type MongoUnderTest, startMongo } from '@webutil/scripts/mongo-under-test';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { expectFailure, json } from './billing-helpers.js';
import { pollJob, startCrawl } from './crawl-helpers.js';

const RETENTION_MS = 8_000;

/**
 * Crawls without NATS (the in-process queue and bus), with the job store on the embedded SQLite
 * file (`npm start`'s default) and on the mongoose adapter (jongodb, or MONGO_URL); a short job
 * retention and time budget so expiry and the budget can be watched.
 */
for (const store of ['SQLite', 'mongoose'] as const) {
  describe(`crawls on the in-process bus, job store on ${store}`, function () {
    this.timeout(90_000);
    let mongo: MongoUnderTest | undefined;
    let stack: TestStack;
    let small: CrawlSite;
    let slow: CrawlSite;

    before(async () => {
      [mongo, small, slow] = await Promise.all([
        store === 'mongoose' ? startMongo() : undefined,
        startCrawlSite({ pages: 5, silentHost: false, rateLimited: false }),
        startCrawlSite({ pages: 200, latencyMs: 300, silentHost: false, rateLimited: false }),
      ]);
      const crawlEnv = { CRAWL_JOB_RETENTION_MS: String(RETENTION_MS), CRAWL_TIME_BUDGET_MS: '2000' };
      stack = await startTestStack({
        allowTargets: '127.0.0.0/8',
        envFor: { crawl: mongo ? { ...crawlEnv, MONGO_URL: mongo.url } : crawlEnv },
      });
    });
    after(async () => {
      await stack?.stop();
      await Promise.all([small?.close(), slow?.close(), mongo?.stop()]);
    });

    it('finishes a crawl, and the job is gone (404) once its retention has passed', async () => {
      const started = Date.now();
      const jobId = await startCrawl(stack, 'broken-links', small.entryUrl);
      const { job } = await pollJob(stack, 'broken-links', jobId);
      expect(job.status).to.equal('done');
      expect(job.result.pagesCrawled).to.be.above(5);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + RETENTION_MS + 500 - Date.now())));
      await expectFailure(await stack.api(`/v1/broken-links/crawl/${jobId}`), 404, 'job_not_found');
    });

    it('ends a crawl at its time budget as done, with what it found', async () => {
      const jobId = await startCrawl(stack, 'broken-links', slow.entryUrl);
      const { job } = await pollJob(stack, 'broken-links', jobId);
      expect(job.status).to.equal('done');
      expect(job.progress.message).to.match(/^Stopped at the 2 s time budget/);
      expect(job.result.truncatedPages).to.equal(true);
      expect(job.result.pagesCrawled).to.be.within(1, 199);
      // Pages robots.txt disallows are listed (with a reason) but not crawled.
      expect(job.result.pages.filter((p: any) => !p.reason)).to.have.length(job.result.pagesCrawled);
      expect(job.result.links.length).to.be.above(0);
    });

    describe('with the default retention', () => {
      // A kill and restart can outlast the short retention above on a loaded machine.
      let durable: TestStack;
      before(async () => {
        const crawlEnv = { CRAWL_TIME_BUDGET_MS: '2000' };
        durable = await startTestStack({
          allowTargets: '127.0.0.0/8',
          envFor: { crawl: mongo ? { ...crawlEnv, MONGO_URL: mongo.url } : crawlEnv },
        });
      });
      after(async () => {
        await durable?.stop();
      });

      it('hands a crawl killed with its service back to the restarted service', async () => {
        const jobId = await startCrawl(durable, 'link-extract', slow.entryUrl);
        for (;;) {
          const { data } = await json(await durable.api(`/v1/link-extract/crawl/${jobId}`));
          expect(data.status).to.equal('crawling');
          if (data.progress.pagesScanned > 0) break;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        await durable.kill('crawl');
        await durable.start('crawl');
        const { job } = await pollJob(durable, 'link-extract', jobId);
        expect(job.status).to.equal('done');
        expect(durable.logs.some((l) => l.includes('handed back to workers'))).to.equal(true);
      });
    });
  });
}
