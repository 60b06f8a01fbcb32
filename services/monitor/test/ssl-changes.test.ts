import { expect } from 'chai';
import { compareSslScans, DEFAULT_EXPIRY_DAYS, type SslScanResult } from '../src/ssl-changes.js';

const DAY_MS = 86_400_000;
const NOW = Date.parse('2026-11-29T12:00:00Z');

/** A scan of example.test whose certificate has `days` left, with a given grade and fingerprint. */
function scan(days: number, grade = 'A', fingerprint256 = 'AA:01'): SslScanResult {
  return {
    domain: 'example.test',
    daysUntilExpiry: days,
    isExpired: days < 0,
    securityGrade: grade,
    certificate: { fingerprint256, valid_to: new Date(NOW + days * DAY_MS).toISOString() },
  };
}

describe('compareSslScans', () => {
  it('alerts once at each threshold as the days run down, and once on expiry', () => {
    const alerts: number[] = [];
    let expiredAt: number | undefined;
    let previous: SslScanResult | undefined;
    for (let days = 45; days >= -3; days--) {
      const changes = compareSslScans(previous, scan(days));
      if (changes.expiryThresholdCrossed !== null) alerts.push(changes.expiryThresholdCrossed);
      if (changes.expired) expiredAt = days;
      expect(changes.alert).to.equal(changes.expiryThresholdCrossed !== null || changes.expired);
      previous = scan(days);
    }
    expect(alerts).to.deep.equal([...DEFAULT_EXPIRY_DAYS].sort((a, b) => b - a));
    expect(expiredAt).to.equal(-1);
  });

  it('with weekly runs, alerts at the smallest threshold crossed since the last run', () => {
    const changes = compareSslScans(scan(16), scan(9), [30, 14, 7, 1]);
    expect(changes.expiryThresholdCrossed).to.equal(14);
    const skipped = compareSslScans(scan(16), scan(5), [30, 14, 7, 1]);
    expect(skipped.expiryThresholdCrossed).to.equal(7);
    expect(skipped.lines[0]).to.include('expires in 5 days').and.include('threshold 7 days');
  });

  it('a first run already inside a threshold alerts; one outside does not', () => {
    expect(compareSslScans(undefined, scan(10)).expiryThresholdCrossed).to.equal(14);
    const far = compareSslScans(undefined, scan(80));
    expect(far.alert).to.equal(false);
    expect(far.lines).to.deep.equal([]);
  });

  it('reads custom thresholds in any order', () => {
    const changes = compareSslScans(scan(61), scan(59), [3, 60]);
    expect(changes.expiryThresholdCrossed).to.equal(60);
    expect(compareSslScans(scan(59), scan(58), [3, 60]).alert).to.equal(false);
  });

  it('a renewed certificate is a new certificate, not a threshold crossing', () => {
    const changes = compareSslScans(scan(3, 'A', 'AA:01'), scan(90, 'A', 'BB:02'));
    expect(changes.newCertificate).to.deep.equal({
      fromFingerprint256: 'AA:01',
      toFingerprint256: 'BB:02',
      validTo: scan(90).certificate.valid_to,
    });
    expect(changes.expiryThresholdCrossed).to.equal(null);
    expect(changes.alert).to.equal(true);
    expect(changes.lines.join(' ')).to.include('new certificate').and.include('90 days left');
  });

  it('a grade that drops alerts; one that rises is recorded without an alert', () => {
    const worse = compareSslScans(scan(200, 'A+'), scan(199, 'B'));
    expect(worse.grade).to.deep.equal({ from: 'A+', to: 'B', direction: 'worse' });
    expect(worse.alert).to.equal(true);
    const better = compareSslScans(scan(200, 'C'), scan(199, 'A'));
    expect(better.grade).to.deep.equal({ from: 'C', to: 'A', direction: 'better' });
    expect(better.alert).to.equal(false);
    expect(better.lines).to.have.length(1);
  });

  it('nothing changed: no alert, no lines', () => {
    const same = compareSslScans(scan(100), scan(99));
    expect(same).to.include({ alert: false, expired: false, grade: null, newCertificate: null });
    expect(same.lines).to.deep.equal([]);
  });
});
