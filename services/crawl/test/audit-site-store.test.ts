import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { AddressPolicy, SafeHttp } from '@webutil/kit';
import { expect } from 'chai';
import { HostThrottle } from '../src/checking/throttle.js';
import { readConfig } from '../src/config.js';
import { SqliteAuditPages } from '../src/jobs/audit-pages-sqlite.js';
import { auditSite } from '../src/site-audit/audit-site.js';
import type { AuditedPage } from '../src/site-audit/page-checks.js';

/** A site of `pages` pages in a tree (each links its three children and the home page). */
function serveTree(pages: number): Promise<{ server: http.Server; base: string }> {
  const server = http.createServer((req, res) => {
    const match = /^\/(?:p\/(\d+))?$/.exec(req.url ?? '');
    const i = match ? Number(match[1] ?? 0) : Number.NaN;
    if (!(i < pages)) return void res.writeHead(404).end();
    const children = [1, 2, 3].map((k) => 3 * i + k).filter((c) => c < pages);
    const links = ['/', ...children.map((c) => `/p/${c}`)].map((l) => `<a href="${l}">${l}</a>`).join('');
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end(`<!doctype html><html lang="en"><head><title>Tree page ${i}</title></head><body>${links}</body></html>`);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }),
    ),
  );
}

/** The embedded store, noting the most page records it held at once. */
class WatchedPages extends SqliteAuditPages {
  most = 0;
  override async add(jobId: string, pages: readonly AuditedPage[], expiresAt: Date): Promise<number> {
    const added = await super.add(jobId, pages, expiresAt);
    this.most = Math.max(this.most, await this.count(jobId));
    return added;
  }
}

describe('site audit with its page records in the job store', function () {
  this.timeout(60_000);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'audit-store-'));
  const settings = readConfig({ DATA_DIR: dir, WEBUTIL_ALLOW_TARGETS: '127.0.0.0/8' });
  const safe = new SafeHttp({ policy: new AddressPolicy(settings.WEBUTIL_ALLOW_TARGETS) });
  const store = new WatchedPages(path.join(dir, 'jobs.sqlite'));
  const deps = {
    http: safe,
    throttle: new HostThrottle({
      globalLimit: 64,
      initialPerHost: 16,
      maxPerHost: 32,
      slowMs: 10_000,
      timeoutsToGiveUp: 3,
      downForMs: 60_000,
    }),
    ...settings.fetch,
    limits: settings.crawl,
  };
  let site: { server: http.Server; base: string };

  before(async () => {
    site = await serveTree(300);
  });
  after(async () => {
    site.server.close();
    await safe.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const audit = (jobId: string) =>
    auditSite(
      new URL(`${site.base}/`),
      1_000,
      deps,
      () => undefined,
      new AbortController().signal,
      { checkFragments: false },
      { store, jobId, expiresAt: new Date(Date.now() + 600_000) },
    );

  it('stores every page as it is audited, reports from the store, and leaves nothing once reported', async () => {
    const jobId = randomUUID();
    const result = await audit(jobId);
    expect(result.pagesAudited).to.equal(300);
    expect(store.most).to.equal(300);
    expect(result.statusCodes).to.deep.equal([{ key: '200', pages: 300 }]);
    expect(result.depths.reduce((n, row) => n + row.pages, 0)).to.equal(300);
    expect(await store.count(jobId)).to.equal(0);
  });

  it('starts a new try over: records an interrupted try left behind are not counted', async () => {
    const jobId = randomUUID();
    const stale: AuditedPage = {
      url: `${site.base}/p/999`,
      depth: 1,
      fromSitemap: false,
      status: 500,
      redirects: 0,
      refused: false,
      links: [],
    };
    await store.add(jobId, [stale], new Date(Date.now() + 600_000));
    const result = await audit(jobId);
    expect(result.pagesAudited).to.equal(300);
    expect(result.statusCodes).to.deep.equal([{ key: '200', pages: 300 }]);
    expect(result.issues.map((i) => i.id)).not.to.include('http_5xx');
  });
});
