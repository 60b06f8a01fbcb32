import { SslScanResponse } from '@webutil/proto/webutil/tlsscan/v1/tlsscan';
import { expect } from 'chai';
import { siteServiceFindings, tlsOf } from '../src/site-audit/site-services.js';

const scan = (fields: Partial<SslScanResponse>) =>
  SslScanResponse.fromPartial({
    securityGrade: 'A',
    isValid: true,
    daysUntilExpiry: 200,
    tlsVersion: 'TLSv1.3',
    protocols: [
      { version: 'TLSv1', supported: false },
      { version: 'TLSv1.1', supported: false },
      { version: 'TLSv1.2', supported: true },
      { version: 'TLSv1.3', supported: true },
    ],
    ...fields,
  });

const entry = new URL('https://example.test/docs/');
const findings = (fields: Partial<SslScanResponse>) =>
  siteServiceFindings(entry, { tls: tlsOf(scan(fields)), downCheck: undefined, screenshots: undefined }).map((f) => [
    f.id,
    f.detail,
  ]);

describe('site audit: site-level checks of the other services', () => {
  it('finds nothing wrong with a good certificate and a site that is up', () => {
    const tls = tlsOf(scan({}));
    expect(tls).to.deep.include({ available: true, grade: 'A', daysUntilExpiry: 200, problems: [] });
    const down = { available: true, up: true, verdict: 'up', status: 200, reason: 'HTTP 200' };
    expect(siteServiceFindings(entry, { tls, downCheck: down, screenshots: undefined })).to.deep.equal([]);
  });

  it('names an expired, untrusted or mismatched certificate an error, an expiring one a warning', () => {
    expect(
      findings({ isExpired: true, isValid: false, daysUntilExpiry: -3, trustMarker: 'T', securityGrade: 'F' }),
    ).to.deep.equal([['tls_certificate_invalid', 'certificate expired 3 day(s) ago']]);
    expect(findings({ isValid: false, trustMarker: 'M', securityGrade: 'F' })).to.deep.equal([
      ['tls_certificate_invalid', 'certificate name does not match the host'],
    ]);
    expect(findings({ isValid: false, trustMarker: 'T', securityGrade: 'F' })).to.deep.equal([
      ['tls_certificate_invalid', 'certificate not trusted'],
    ]);
    expect(findings({ daysUntilExpiry: 12 })).to.deep.equal([
      ['tls_certificate_expiring', 'certificate expires in 12 day(s)'],
    ]);
  });

  it('names old protocols and a weak grade a warning, on the origin (not a page)', () => {
    const old = [
      { version: 'TLSv1', supported: true },
      { version: 'TLSv1.1', supported: true },
      { version: 'TLSv1.2', supported: true },
    ];
    expect(findings({ protocols: old, securityGrade: 'C' })).to.deep.equal([
      ['tls_weak', 'old protocols accepted: TLSv1, TLSv1.1; grade C'],
    ]);
    const [finding] = siteServiceFindings(entry, {
      tls: tlsOf(scan({ securityGrade: 'D' })),
      downCheck: undefined,
      screenshots: undefined,
    });
    expect(finding?.url).to.equal('https://example.test');
  });

  it('names a start URL the down-check finds down, and nothing for a check that could not run', () => {
    const down = { available: true, up: false, verdict: 'down', reason: 'connection refused' };
    expect(siteServiceFindings(entry, { tls: undefined, downCheck: down, screenshots: undefined })).to.deep.equal([
      { id: 'site_down', url: 'https://example.test', detail: 'https://example.test/docs/: connection refused' },
    ]);
    const failed = { available: false, unavailableReason: 'the down-check failed: deadline exceeded' };
    const tls = { available: false, unavailableReason: 'the TLS scan failed: no answer', problems: [] };
    expect(siteServiceFindings(entry, { tls, downCheck: failed, screenshots: undefined })).to.deep.equal([]);
  });
});

describe('site audit: the price of the pages audited (decision 0490)', () => {
  const hold = { reservationId: 'r', credits: 2, blockSize: 100, blockCredits: 2, operation: 'site-audit' };
  it('is the first block’s credits, then each further block’s begun; nothing for no page', async () => {
    const { auditPrice } = await import('../src/jobs/audit-credits.js');
    expect([0, 1, 100, 101, 450, 100_000].map((pages) => auditPrice(hold, pages))).to.deep.equal([
      0, 2, 2, 4, 10, 2_000,
    ]);
  });
});
