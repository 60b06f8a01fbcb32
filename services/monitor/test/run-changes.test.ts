import { expect } from 'chai';
import { compareLinkCrawls } from '../src/link-changes.js';
import { compareMetaScans } from '../src/meta-changes.js';
import { compareResults } from '../src/run-changes.js';
import { compareSslScans } from '../src/ssl-changes.js';

const ssl = (days: number) => ({
  domain: 'a.test',
  daysUntilExpiry: days,
  securityGrade: 'A',
  certificate: { fingerprint256: 'F', valid_to: '2027-01-01T00:00:00.000Z' },
});
const meta = (status: 'pass' | 'fail') => ({
  url: 'https://a.test/',
  finalScore: status === 'pass' ? 100 : 0,
  grade: status === 'pass' ? 'A' : 'F',
  categories: [{ id: 'basic', results: [{ id: 'meta_title', value: null, status, message: '' }] }],
});
const crawl = (severity: string) => ({
  links: [{ url: 'https://a.test/x', severity, statusCode: 404, statusText: 'Not Found' }],
  summary: { broken: severity === 'broken' ? 1 : 0 },
});

describe('compareResults', () => {
  it('hands each kind to its comparison, with the monitor’s rules', () => {
    expect(compareResults('ssl-scan', ssl(70), ssl(50), { expiryDays: [60] })).to.deep.equal(
      compareSslScans(ssl(70), ssl(50), [60]),
    );
    expect(compareResults('ssl-scan', ssl(40), ssl(20), { expiryDays: [] })?.alert).to.equal(true);
    expect(compareResults('meta-scan', meta('pass'), meta('fail'))).to.deep.equal(
      compareMetaScans(meta('pass'), meta('fail')),
    );
    expect(compareResults('broken-links-crawl', undefined, crawl('broken'))).to.deep.equal(
      compareLinkCrawls(undefined, crawl('broken')),
    );
  });

  it('down-check and screenshot are compared elsewhere', () => {
    expect(compareResults('down-check', {}, {})).to.equal(undefined);
    expect(compareResults('screenshot', {}, {})).to.equal(undefined);
  });
});
