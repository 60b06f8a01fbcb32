import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type MongoUnderTest, startMongo } from '@webutil/scripts/mongo-under-test';
import { type OwnNats, startOwnNats } from '@webutil/scripts/nats-under-test';
import { fundedKey } from '@webutil/scripts/test-accounts';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { xbelOf } from '@webutil/scripts/xbel-fixtures';
import { expect } from 'chai';
import { eventually, quota } from '../billing-helpers.js';

/** The test account's credits. */
const CREDITS = 100;
/** Bookmarks of a large file: three blocks of 1,000 begun. */
const LARGE = 2_345;

/**
 * Issue 36 item 8 in the multi-replica topology (two edges, two billing, two crawl, NATS, jongodb):
 * a bookmark check priced by its size (decision 0351) is charged its sized price once, whichever
 * edge takes it or its retry, and a caller short of it is refused on either edge with nothing spent.
 */
describe('bookmark check priced by size in a cluster (two edges, two billing, two crawl)', function () {
  this.timeout(300_000);
  let nats: OwnNats;
  let mongo: MongoUnderTest;
  let stack: TestStack;
  let site: http.Server;
  let base: string;
  let priceOf: (bookmarks: number) => number;

  before(async () => {
    site = http.createServer((req, res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<p>page ${req.url}</p>`),
    );
    [nats, mongo] = await Promise.all([
      startOwnNats(),
      startMongo(),
      new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve)),
    ]);
    base = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      env: { NATS_URL: nats.url, MONGO_URL: mongo.url },
      envFor: { crawl: { CRAWL_TIME_BUDGET_MS: '8000' } },
      replicas: { billing: 2, crawl: 2 },
      edges: 2,
    });
    const doc = (await (await fetch(`${stack.edgeUrls[1]}/v1/openapi.json`)).json()) as any;
    const op = doc.paths['/v1/bookmarks/check'].post;
    const block = op['x-credits-per-block'] as { size: number; credits: number };
    priceOf = (bookmarks) => op['x-credits'] + (Math.max(1, Math.ceil(bookmarks / block.size)) - 1) * block.credits;
  });
  after(async () => {
    await stack?.stop();
    site?.close();
    await Promise.all([nats?.dispose(), mongo?.stop()]);
  });

  const freshKey = (name: string, credits: number) => fundedKey(stack, name, credits);

  const file = (prefix: string) =>
    xbelOf(
      Array.from({ length: LARGE }, (_, i) => ({
        kind: 'bookmark' as const,
        href: `${base}${prefix}/${i}`,
        title: `${i}`,
      })),
    );

  const check = async (edge: number, apiKey: string, xbel: string, idempotencyKey?: string) => {
    const form = new FormData();
    form.set('file', new Blob([xbel], { type: 'application/xml' }), 'large.xbel');
    const res = await fetch(`${stack.edgeUrls[edge]}/v1/bookmarks/check`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, ...(idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {}) },
      body: form,
    });
    const body = (await res.json()) as { data?: { jobId: string }; error?: { code: string; creditsRequired?: number } };
    return { res, body };
  };

  /**
   * The caller's balance as each edge reads it: an edge answers a quota read from its view of the
   * caller for a moment (CALLER_VIEW_MS), so the other edge's charges show within seconds.
   */
  const expectBalance = (apiKey: string, expected: number) =>
    eventually(async () => {
      for (const edge of [0, 1])
        expect((await quota(stack, { apiKey, edge })).remaining, `edge ${edge}`).to.equal(expected);
    }, 10_000);

  it('large checks on both edges: each charged its sized price once; a retry on the other edge, nothing', async () => {
    const sized = priceOf(LARGE);
    expect(sized).to.be.above(priceOf(1));
    const apiKey = await freshKey('large', CREDITS);
    const retried = file('/retried');
    // One check on each edge at once, and the first one's retry, with its Idempotency-Key, on the other edge.
    const [first, second] = await Promise.all([
      check(0, apiKey, retried, 'large-check-1'),
      check(1, apiKey, file('/other')),
    ]);
    expect(first.res.status, JSON.stringify(first.body)).to.equal(202);
    expect(second.res.status, JSON.stringify(second.body)).to.equal(202);
    const retry = await check(1, apiKey, retried, 'large-check-1');
    expect(retry.res.status, JSON.stringify(retry.body)).to.equal(202);
    expect(retry.res.headers.get('idempotent-replayed')).to.equal('true');
    expect(retry.body.data?.jobId).to.equal(first.body.data?.jobId);
    await expectBalance(apiKey, CREDITS - 2 * sized);

    // The jobs end on whichever crawl replica took them; ending charges nothing more.
    for (const { body } of [first, second]) {
      const job = await eventually(async () => {
        const poll = await fetch(`${stack.edgeUrls[1]}/v1/bookmarks/check/${body.data?.jobId}`, {
          headers: { authorization: `Bearer ${apiKey}` },
        });
        const { data } = (await poll.json()) as { data: { status: string; result?: { checkedBookmarks: number } } };
        expect(data.status).to.not.equal('crawling');
        return data;
      }, 120_000);
      expect(job.status).to.equal('done');
      expect(priceOf(job.result?.checkedBookmarks ?? 0)).to.equal(sized);
    }
    await expectBalance(apiKey, CREDITS - 2 * sized);
  });

  it('a caller short of the sized price is refused 402 on either edge, nothing spent', async () => {
    const sized = priceOf(LARGE);
    const credits = sized - 1;
    const apiKey = await freshKey('short', credits);
    for (const edge of [0, 1]) {
      const { res, body } = await check(edge, apiKey, file(`/short-${edge}`));
      expect(res.status, JSON.stringify(body)).to.equal(402);
      expect(body.error?.code).to.equal('insufficient_credits');
      expect(body.error?.creditsRequired).to.equal(sized);
      expect(Number(res.headers.get('x-credits-remaining'))).to.equal(credits);
      await expectBalance(apiKey, credits);
    }
  });

  it(
    'a site audit holds its cap’s price on one edge and its job ' + 'returns the unaudited pages’ part (decision 0490)',
    async () => {
      const apiKey = await freshKey('audit-held', CREDITS);
      // A cap of 450 pages holds 10 credits (2 per 100 begun); the site is one page without links.
      const res = await fetch(`${stack.edgeUrls[0]}/v1/site-audit`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: `${base}/audit`, maxPages: 450 }),
      });
      const started = (await res.json()) as { data: { jobId: string } };
      expect(res.status, JSON.stringify(started)).to.equal(202);
      expect(Number(res.headers.get('x-credits-remaining'))).to.equal(CREDITS - 10);
      const job = await eventually(async () => {
        const poll = (await (await fetch(`${stack.edgeUrls[1]}/v1/site-audit/${started.data.jobId}`)).json()) as any;
        expect(poll.data.status).to.not.equal('crawling');
        return poll.data;
      }, 120_000);
      expect(job.status, JSON.stringify(job.error)).to.equal('done');
      expect(job.result.pagesAudited).to.equal(1);
      // Settled by the crawl replica that ended the job, in MongoDB: read on either edge.
      await expectBalance(apiKey, CREDITS - 2);
    },
  );
});
