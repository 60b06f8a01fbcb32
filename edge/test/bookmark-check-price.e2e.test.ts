import { readdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { xbelOf } from '@webutil/scripts/xbel-fixtures';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { account, creditsHeader, expectFailure, json, quota } from './billing-helpers.js';

/**
 * Issue 36 item 8: a bookmark check is priced by its size (decision 0351). The contract's
 * `x-credits` pays for the first block of bookmarks and `x-credits-per-block` says what each
 * further block begun costs; the price is held once the file is read, before the job exists.
 */

/** Bookmarks of the large file: three blocks of 1,000 begun. */
const LARGE = 2_345;

interface BlockPrice {
  size: number;
  credits: number;
  maxUnits: number;
}

/** The fixture site: `/slow/…` answers after a while (jobs that stay running), anything else at once. */
function startSite(hits: string[]): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    hits.push(url);
    const answer = () => res.writeHead(200, { 'content-type': 'text/html' }).end(`<p>page ${url}</p>`);
    if (url.startsWith('/slow/')) setTimeout(answer, 2_000);
    else answer();
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

describe('Bookmark check priced by size (POST /v1/bookmarks/check)', function () {
  this.timeout(180_000);
  let stack: TestStack;
  let site: http.Server;
  let base: string;
  const hits: string[] = [];
  /** The price of a check of `bookmarks`, by the rule the served contract states. */
  let priceOf: (bookmarks: number) => number;
  let firstBlock: number;

  before(async () => {
    site = await startSite(hits);
    base = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      envFor: { crawl: { CRAWL_TIME_BUDGET_MS: '6000', LINK_TIMEOUT_MS: '3000' } },
    });
    const doc = (await (await stack.api('/v1/openapi.json')).json()) as any;
    const op = doc.paths['/v1/bookmarks/check'].post;
    firstBlock = op['x-credits'];
    const block = op['x-credits-per-block'] as BlockPrice;
    expect(block.size).to.be.above(0);
    priceOf = (bookmarks) => firstBlock + (Math.max(1, Math.ceil(bookmarks / block.size)) - 1) * block.credits;
  });
  after(async () => {
    await stack?.stop();
    site?.close();
  });

  /** An XBEL file of `count` bookmarks under `prefix` on the fixture site. */
  const file = (prefix: string, count: number) =>
    xbelOf(
      Array.from({ length: count }, (_, i) => ({
        kind: 'bookmark' as const,
        href: `${base}${prefix}/${i}`,
        title: `Page ${i}`,
      })),
    );

  const upload = (xbel: string, apiKey?: string) => {
    const form = new FormData();
    form.set('file', new Blob([xbel], { type: 'application/xml' }), 'mine.xbel');
    return stack.api('/v1/bookmarks/check', { method: 'POST', body: form, ...(apiKey ? { apiKey } : {}) });
  };

  async function poll(jobId: string, apiKey?: string): Promise<any> {
    const deadline = Date.now() + 90_000;
    for (;;) {
      const body = await json(await stack.api(`/v1/bookmarks/check/${jobId}`, apiKey ? { apiKey } : {}));
      if (body.data.status !== 'crawling') return body.data;
      if (Date.now() > deadline) throw new Error(`still checking: ${JSON.stringify(body.data.progress)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** Files the bookmark service keeps for checks (the plain XBEL it read), in its artifact store. */
  const keptFiles = () =>
    readdirSync(path.join(stack.dataDir, 'artifacts', 'bookmark')).filter((f) => f.endsWith('.kxbel'));

  /** Jobs of a caller in the crawl service's store, whatever their status. */
  const storedJobs = (caller: string) => {
    const db = new Database(path.join(stack.dataDir, 'crawl-jobs.sqlite'), { readonly: true });
    try {
      return (db.prepare('SELECT count(*) AS n FROM crawl_jobs WHERE caller = ?').get(caller) as { n: number }).n;
    } finally {
      db.close();
    }
  };

  it('a small file costs the spec’s 2 credits; a file of three blocks costs its sized price, once', async () => {
    // The route's price for a small file stays the one the docs always gave.
    expect(firstBlock).to.equal(2);
    const before = (await quota(stack)).remaining;
    const small = await upload(file('/small', 7));
    const smallBody = await json(small);
    expect(small.status, JSON.stringify(smallBody)).to.equal(202);
    expect(before - (await quota(stack)).remaining).to.equal(2);

    const sized = priceOf(LARGE);
    expect(sized).to.be.above(firstBlock); // the file is larger than one block
    const middle = (await quota(stack)).remaining;
    const large = await upload(file('/large', LARGE));
    const largeBody = await json(large);
    expect(large.status, JSON.stringify(largeBody)).to.equal(202);
    expect(creditsHeader(large)).to.equal(middle - sized);
    const job = await poll(largeBody.data.jobId);
    expect(job.status, JSON.stringify(job.error)).to.equal('done');
    // What was paid follows from what the result says was checked.
    expect(job.result.checkedBookmarks).to.equal(LARGE);
    expect(middle - (await quota(stack)).remaining).to.equal(priceOf(job.result.checkedBookmarks));
  });

  it('a caller short of the sized price: 402 with it required, nothing spent or kept, no job, no fetch', async () => {
    const sized = priceOf(LARGE);
    // Enough for a small check, not for the large one.
    const credits = sized - 1;
    const poor = await stack.admin(
      'create-account',
      '--email',
      `poor-${Date.now()}@example.test`,
      '--plan',
      'STARTER',
      '--credits',
      String(credits),
      '--mint-key',
      'poor',
    );
    const apiKey = poor.apiKey as string;
    expect((await quota(stack, { apiKey })).remaining).to.equal(credits);
    const kept = keptFiles();
    const refused = await upload(file('/refused', LARGE), apiKey);
    const body = await expectFailure(refused, 402, 'insufficient_credits');
    expect(body.error?.creditsRequired).to.equal(sized);
    expect(creditsHeader(refused)).to.equal(credits);
    expect((await quota(stack, { apiKey })).remaining).to.equal(credits);
    expect(storedJobs(`account:${poor.id}`)).to.equal(0);
    // The file the bookmark service read to count it is not kept: no job will read it.
    expect(keptFiles()).to.deep.equal(kept);

    // The same caller's small file is checked for the first block's price; the refused file's URLs
    // were never asked for (a job would have fetched them first: first in, first out).
    const small = await upload(file('/after-refusal', 3), apiKey);
    const smallBody = await json(small);
    expect(small.status, JSON.stringify(smallBody)).to.equal(202);
    expect((await poll(smallBody.data.jobId, apiKey)).status).to.equal('done');
    expect((await quota(stack, { apiKey })).remaining).to.equal(credits - firstBlock);
    expect(storedJobs(`account:${poor.id}`)).to.equal(1);
    expect(keptFiles()).to.have.length(kept.length + 1);
    expect(hits.filter((hit) => hit.startsWith('/refused/'))).to.deep.equal([]);
    expect(hits.filter((hit) => hit.startsWith('/after-refusal/')).length).to.be.above(0);
  });

  it('a start the crawl service refuses after the file was priced spends nothing', async () => {
    const sized = priceOf(LARGE);
    const busy = await account(stack, 'STARTER', '--credits', '1000');
    const start = async (n: number) => {
      const res = await upload(file(`/slow/${n}`, LARGE), busy.apiKey);
      return { res, body: await json(res) };
    };
    const before = (await quota(stack, { apiKey: busy.apiKey })).remaining;
    // A Starter caller may have 4 crawl jobs queued or running (decision 0142): the slow site keeps them running.
    for (let n = 0; n < 4; n++) {
      const { res, body } = await start(n);
      expect(res.status, JSON.stringify(body)).to.equal(202);
    }
    expect(before - (await quota(stack, { apiKey: busy.apiKey })).remaining).to.equal(4 * sized);
    const { res, body } = await start(4);
    expect(res.status, JSON.stringify(body)).to.equal(429);
    expect(body.error?.code).to.equal('too_many_crawls');
    // The fifth file was read and priced, then its start refused: its sized hold went back.
    expect(before - (await quota(stack, { apiKey: busy.apiKey })).remaining).to.equal(4 * sized);
  });
});
