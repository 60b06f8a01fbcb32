import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { json } from './billing-helpers.js';
import { startCrawl } from './crawl-helpers.js';

/**
 * Issue 29, item 4: each edge reaches every replica of a service (one address list, balanced
 * round robin by grpc-js, as the chart's headless Services are). With one replica of billing,
 * crawl and meta-scan SIGKILLed, both edges keep answering paid calls and job polls.
 */
describe('every edge reaches every replica', function () {
  this.timeout(240_000);
  let stack: TestStack;
  let site: FixtureSite;

  before(async () => {
    site = await startFixtureSite();
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      replicas: { billing: 2, crawl: 2, 'meta-scan': 2 },
      edges: 2,
    });
  });
  after(async () => {
    await stack?.stop();
    await site?.close();
  });

  /** Paid down-checks, a job poll and the quota through one edge; every answer's status. */
  const round = async (edge: number, jobId: string) => {
    const answers = await Promise.all([
      ...Array.from({ length: 8 }, (_, i) => stack.api(`/v1/down-check?url=${site.url(`/ok?i=${i}`)}`, { edge })),
      ...Array.from({ length: 4 }, () => stack.api(`/v1/link-extract/crawl/${jobId}`, { edge })),
      stack.api('/v1/quota', { edge }),
    ]);
    return Promise.all(
      answers.map(async (res) => {
        const body = await json(res);
        return `${res.status} ${body.error?.code ?? ''}`.trim();
      }),
    );
  };

  it('answers on both edges while one replica of each service is down', async () => {
    const jobId = await startCrawl(stack, 'link-extract', site.url('/ok'));
    for (const edge of [0, 1]) expect(new Set(await round(edge, jobId))).to.deep.equal(new Set(['200']));
    await Promise.all(['billing', 'crawl-2', 'meta-scan'].map((name) => stack.kill(name)));
    for (let i = 0; i < 3; i++) {
      for (const edge of [0, 1]) {
        expect(new Set(await round(edge, jobId)), `edge ${edge}, round ${i}`).to.deep.equal(new Set(['200']));
      }
    }
  });
});
