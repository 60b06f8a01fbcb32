import type http from 'node:http';
import { fundedKey } from '@webutil/scripts/test-accounts';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { eventually, json, quota } from './billing-helpers.js';
import { auditEngine, post, switchedEngine } from './crawl-helpers.js';
import { type FixtureSite, generateSite, serveSite } from './site-audit-fixture.js';
import { expectedAudit } from './site-audit-oracle.js';

/**
 * A site audit's site-level checks through the REST edge (decision 0489): the down-check of the
 * start URL, screenshots of the start page (desktop, mobile) downloadable from the edge, the TLS
 * scan (not available on an http site), and a check whose service is down reported as not
 * available without failing the audit.
 */

const SITE_ISSUES = ['site_down', 'tls_certificate_invalid', 'tls_certificate_expiring', 'tls_weak'];

/** A PNG's width, from its IHDR chunk. */
const pngWidth = (bytes: Buffer) => bytes.readUInt32BE(16);

describe('Site audit: site-level checks (TLS, down-check, screenshots)', function () {
  this.timeout(300_000);
  let stack: TestStack;
  const servers: http.Server[] = [];

  before(async () => {
    stack = await startTestStack({ allowTargets: '127.0.0.0/8', env: { LINK_TIMEOUT_MS: '3000' } });
  });
  after(async () => {
    await stack?.stop();
    for (const server of servers) server.close();
  });

  async function serve(site: FixtureSite): Promise<string> {
    const { server, base } = await serveSite(site);
    servers.push(server);
    return base;
  }

  async function audit(apiKey: string, body: Record<string, unknown>): Promise<any> {
    const res = await stack.api('/v1/site-audit', { ...post(body), apiKey });
    const started = await json(res);
    expect(res.status, JSON.stringify(started)).to.equal(202);
    const deadline = Date.now() + 150_000;
    for (;;) {
      const poll = await json(await stack.api(`/v1/site-audit/${started.data.jobId}`));
      if (poll.data.status !== 'crawling') return poll.data;
      if (Date.now() > deadline) throw new Error(`still auditing: ${JSON.stringify(poll.data.progress)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  it('down-checks the start URL and captures it on desktop and mobile, images downloadable from the edge', async () => {
    const site = generateSite(4);
    const base = await serve(site);
    const expected = expectedAudit(site, base);
    const apiKey = await fundedKey(stack, 'site-checks', 50);
    const job = await audit(apiKey, { url: `${base}/`, maxPages: 100 });
    expect(job.status, JSON.stringify(job.error)).to.equal('done');
    // Run with SITE_AUDIT_DISTRIBUTED=1 as well: the coordinator makes the same checks.
    expect(await auditEngine(stack, job.jobId)).to.equal(switchedEngine());
    const checks = job.result.site;
    expect(checks.tls).to.deep.include({ available: false });
    expect(checks.tls.unavailableReason).to.match(/http/);
    expect(checks.downCheck).to.deep.include({ available: true, up: true, verdict: 'up', status: 200 });
    expect(checks.downCheck.responseTimeMs).to.be.a('number');
    const widths: number[] = [];
    for (const device of ['desktop', 'mobile'] as const) {
      const shot = checks.screenshots[device];
      expect(shot.available, `${device}: ${shot.unavailableReason}`).to.equal(true);
      expect(shot.imageUrl).to.match(/^\/v1\/site-audit-images\/[A-Za-z0-9_-]{32}\.png$/);
      // No credential: the name is the capability, as a render's file.
      const image = await fetch(`${stack.edgeUrl}${shot.imageUrl}`);
      expect(image.status).to.equal(200);
      expect(image.headers.get('content-type')).to.equal('image/png');
      const bytes = Buffer.from(await image.arrayBuffer());
      expect(bytes.subarray(1, 4).toString()).to.equal('PNG');
      expect(bytes.length).to.equal(shot.sizeBytes);
      widths.push(pngWidth(bytes));
    }
    // The mobile capture is a phone's viewport, narrower than the desktop's.
    expect(widths[1]).to.be.below(widths[0] as number);
    // A site up on http has no site-level issue: the issues are the pages' (the oracle's), no more.
    const ids = job.result.issues.map((i: any) => i.id);
    expect(ids.filter((id: string) => SITE_ISSUES.includes(id))).to.deep.equal([]);
    expect(ids.sort()).to.deep.equal([...expected.issues.keys()].sort());
    const missing = await fetch(`${stack.edgeUrl}/v1/site-audit-images/${'A'.repeat(32)}.png`);
    expect(missing.status).to.equal(404);
    expect(((await missing.json()) as any).error.code).to.equal('file_not_found');
  });

  /** The audit's price (decision 0441): 2 credits for the first 100 pages, 2 for each further 100 begun. */
  const price = (pages: number) => (pages <= 0 ? 0 : 2 * Math.ceil(pages / 100));

  it('holds the cap’s price and returns what the pages not audited would have cost (decision 0490)', async () => {
    const site = generateSite(4);
    const base = await serve(site);
    const apiKey = await fundedKey(stack, 'audit-credits', 100);
    const before = (await quota(stack, { apiKey })).remaining;
    // A cap of 450 pages holds 10 credits; the site has far fewer pages.
    const job = await audit(apiKey, { url: `${base}/`, maxPages: 450 });
    expect(job.status, JSON.stringify(job.error)).to.equal('done');
    const audited = job.result.pagesAudited;
    expect(audited).to.be.above(1).and.below(100);
    const after = await eventually(async () => {
      const remaining = (await quota(stack, { apiKey })).remaining;
      expect(remaining).to.equal(before - price(audited));
      return remaining;
    });
    expect(after).to.equal(before - 2);
  });

  it('returns the whole hold when the audit fails', async () => {
    const base = await serve({ pages: [{ path: '/', status: 404 }], disallow: [] });
    const apiKey = await fundedKey(stack, 'audit-credits-failed', 100);
    const before = (await quota(stack, { apiKey })).remaining;
    const job = await audit(apiKey, { url: `${base}/`, maxPages: 300 });
    expect(job.status).to.equal('failed');
    expect(job.error.code).to.equal('target_http_error');
    await eventually(async () => expect((await quota(stack, { apiKey })).remaining).to.equal(before));
  });

  it('reports a check whose service is down as not available, and still finishes the audit', async () => {
    const base = await serve({ pages: [{ path: '/' }], disallow: [] });
    const apiKey = await fundedKey(stack, 'site-checks-down', 50);
    await Promise.all([stack.kill('render'), stack.kill('meta-scan')]);
    try {
      const job = await audit(apiKey, { url: `${base}/`, maxPages: 10 });
      expect(job.status, JSON.stringify(job.error)).to.equal('done');
      const checks = job.result.site;
      expect(checks.downCheck.available).to.equal(false);
      expect(checks.downCheck.unavailableReason).to.match(/^the down-check failed: /);
      for (const device of ['desktop', 'mobile']) {
        expect(checks.screenshots[device].available, device).to.equal(false);
        expect(checks.screenshots[device].unavailableReason).to.match(/^the screenshot failed: /);
        expect(checks.screenshots[device]).to.not.have.property('imageUrl');
      }
      expect(job.result.pagesAudited).to.equal(1);
      expect(job.result.issues.filter((i: any) => SITE_ISSUES.includes(i.id))).to.deep.equal([]);
    } finally {
      await Promise.all([stack.start('render'), stack.start('meta-scan')]);
    }
  });
});
