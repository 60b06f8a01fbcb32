import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fundedKey } from '@webutil/scripts/test-accounts';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { issue } from '@webutil/scripts/tls-fixtures';
import { expect } from 'chai';
import { json } from './billing-helpers.js';
import { auditEngine, post } from './crawl-helpers.js';
import { serveSite } from './site-audit-fixture.js';

/**
 * A site audit's TLS check through the REST edge (decision 0489) on a real TLS server: an https
 * fixture site on 127.0.0.1 whose certificate, from a test root every service trusts
 * (NODE_EXTRA_CA_CERTS; the scanner's own extra root), expires in a few days, served with TLS 1.0
 * and 1.1 still accepted. Each engine on a stack of its own (SITE_AUDIT_DISTRIBUTED off, then on).
 */

/** Days the site's certificate has left: under the catalogue's 30-day warning. */
const EXPIRES_IN_DAYS = 5;
const SITE_ISSUES = ['site_down', 'tls_certificate_invalid', 'tls_certificate_expiring', 'tls_weak'];

describe('Site audit: the TLS check of an https site, on both engines', function () {
  this.timeout(300_000);
  let dir: string;
  let stack: TestStack | undefined;
  let caFile: string;
  let server: http.Server;
  let base: string;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'site-audit-tls-'));
    const root = await issue({ commonName: 'Site Audit Test Root', ca: true, key: 'rsa2048', validDays: [-365, 3650] });
    const leaf = await issue(
      { commonName: '127.0.0.1', altNames: ['127.0.0.1'], validDays: [-85, EXPIRES_IN_DAYS] },
      root,
    );
    caFile = path.join(dir, 'root.pem');
    writeFileSync(caFile, root.pem);
    const site = {
      pages: [
        { path: '/', links: ['/about'] },
        { path: '/about', links: ['/'] },
      ],
      disallow: [],
    };
    // SECLEVEL=0: OpenSSL accepts TLS 1.0 and 1.1 at all.
    ({ server, base } = await serveSite(site, {
      key: leaf.keyPem,
      cert: leaf.pem,
      minVersion: 'TLSv1',
      ciphers: 'DEFAULT:@SECLEVEL=0',
    }));
  });
  after(async () => {
    await stack?.stop();
    server?.closeAllConnections();
    server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const startStack = (distributed: boolean) =>
    startTestStack({
      allowTargets: '127.0.0.0/8',
      env: { SITE_AUDIT_DISTRIBUTED: distributed ? '1' : '0', NODE_EXTRA_CA_CERTS: caFile, LINK_TIMEOUT_MS: '3000' },
      envFor: {
        'tls-scan': {
          SSL_SCAN_EXTRA_CA_FILE: caFile,
          SSL_SCAN_HANDSHAKE_TIMEOUT_MS: '2000',
          SSL_SCAN_PROBE_TIMEOUT_MS: '2000',
        },
      },
    });

  async function audit(apiKey: string, body: Record<string, unknown>): Promise<any> {
    const res = await (stack as TestStack).api('/v1/site-audit', { ...post(body), apiKey });
    const started = await json(res);
    expect(res.status, JSON.stringify(started)).to.equal(202);
    const deadline = Date.now() + 150_000;
    for (;;) {
      const poll = await json(await (stack as TestStack).api(`/v1/site-audit/${started.data.jobId}`));
      if (poll.data.status !== 'crawling') return poll.data;
      if (Date.now() > deadline) throw new Error(`still auditing: ${JSON.stringify(poll.data.progress)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  for (const engine of ['one-worker', 'distributed'] as const)
    it(`reports a certificate expiring soon and old protocols as site.tls and two issues (${engine})`, async () => {
      await stack?.stop();
      stack = await startStack(engine === 'distributed');
      const apiKey = await fundedKey(stack, `site-audit-tls-${engine}`, 50);
      const job = await audit(apiKey, { url: `${base}/`, maxPages: 10 });
      expect(await auditEngine(stack, job.jobId)).to.equal(engine);
      expect(job.status, JSON.stringify(job.error)).to.equal('done');
      // The crawl trusts the test root: both pages were read over https.
      expect(job.result.pagesAudited).to.equal(2);
      const { tls, downCheck } = job.result.site;
      expect(tls, JSON.stringify(tls)).to.include({ available: true, valid: true });
      // Days are whole days left, counted down from the fixture's end of validity.
      expect(tls.daysUntilExpiry).to.be.within(EXPIRES_IN_DAYS - 1, EXPIRES_IN_DAYS);
      expect(tls.problems).to.deep.equal([
        `certificate expires in ${tls.daysUntilExpiry} day(s)`,
        'old protocols accepted: TLSv1, TLSv1.1',
      ]);
      expect(downCheck).to.include({ available: true, up: true });
      // On the site's origin, each with what was found.
      const site = job.result.issues
        .filter((i: any) => SITE_ISSUES.includes(i.id))
        .map((i: any) => [i.id, i.affected.map((a: any) => [a.url, a.detail])])
        .sort();
      expect(site).to.deep.equal([
        ['tls_certificate_expiring', [[base, tls.problems[0]]]],
        ['tls_weak', [[base, tls.problems[1]]]],
      ]);
    });
});
