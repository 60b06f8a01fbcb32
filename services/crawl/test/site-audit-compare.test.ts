import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AuditIssue, SiteAuditResult } from '@webutil/proto/webutil/crawl/v1/site_audit';
import { expect } from 'chai';
import { SqliteAuditHistory } from '../src/site-audit/audit-history.js';
import { compareAudits, findingsOf, LISTED_CHANGES, withComparison } from '../src/site-audit/compare-audits.js';

const issue = (id: string, urls: string[]): AuditIssue => ({
  id,
  category: 'content',
  priority: 'warning',
  title: id,
  fix: 'fix it',
  pagesAffected: urls.length,
  affectedTotal: urls.length,
  affected: urls.map((url) => ({ url, detail: '', sources: [] })),
});

const result = (scannedAt: string, issues: AuditIssue[]) => ({ scannedAt, issues }) as SiteAuditResult;

describe('site audit comparison', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'audit-history-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('lists findings new and fixed by issue type and URL, and issue types new and gone', () => {
    const before = findingsOf(result('t0', [issue('title_missing', ['/a', '/b']), issue('h1_missing', ['/a'])]));
    const now = findingsOf(result('t1', [issue('title_missing', ['/b', '/c']), issue('lang_missing', ['/a'])]));
    const comparison = compareAudits({ jobId: 'job-0', scannedAt: 't0', findings: before }, now);
    expect(comparison).to.deep.include({
      previousJobId: 'job-0',
      previousScannedAt: 't0',
      newIssues: ['lang_missing'],
      fixedIssues: ['h1_missing'],
      newFindingsTotal: 2,
      fixedFindingsTotal: 2,
    });
    expect(comparison.newFindings).to.deep.equal([
      { issue: 'lang_missing', url: '/a' },
      { issue: 'title_missing', url: '/c' },
    ]);
    expect(comparison.fixedFindings).to.deep.equal([
      { issue: 'h1_missing', url: '/a' },
      { issue: 'title_missing', url: '/a' },
    ]);
  });

  it('lists at most 1,000 changes a side and counts them all', () => {
    const urls = Array.from({ length: LISTED_CHANGES + 5 }, (_, i) => `/p${i}`);
    const comparison = compareAudits(
      { jobId: 'j', scannedAt: 't0', findings: [] },
      findingsOf(result('t1', [issue('title_missing', urls)])),
    );
    expect(comparison.newFindings).to.have.length(LISTED_CHANGES);
    expect(comparison.newFindingsTotal).to.equal(LISTED_CHANGES + 5);
  });

  it('compares an account’s audit of a site with its previous one, never with itself nor another’s', async () => {
    const history = new SqliteAuditHistory(path.join(dir, 'history.sqlite'));
    const fail = (err: unknown) => {
      throw err;
    };
    const site = { url: 'https://example.com/', caller: 'account:1' };
    const first = await withComparison(
      history,
      { ...site, id: 'a1' },
      result('2026-01-01T00:00:00.000Z', [issue('title_missing', ['/a'])]),
      fail,
    );
    expect(first.comparison).to.equal(undefined);
    // A retried delivery of the same job finds no earlier audit either.
    const retried = await withComparison(history, { ...site, id: 'a1' }, first, fail);
    expect(retried.comparison).to.equal(undefined);
    const second = await withComparison(
      history,
      { ...site, id: 'a2' },
      result('2026-01-02T00:00:00.000Z', [issue('title_missing', ['/b'])]),
      fail,
    );
    expect(second.comparison?.previousJobId).to.equal('a1');
    expect(second.comparison?.newFindings).to.deep.equal([{ issue: 'title_missing', url: '/b' }]);
    expect(second.comparison?.fixedFindings).to.deep.equal([{ issue: 'title_missing', url: '/a' }]);
    const third = await withComparison(history, { ...site, id: 'a3' }, result('2026-01-03T00:00:00.000Z', []), fail);
    expect(third.comparison?.previousJobId).to.equal('a2');
    // Another account's audit of the same URL, and an anonymous caller's, compare with nothing.
    const other = await withComparison(
      history,
      { ...site, caller: 'account:2', id: 'b1' },
      result('2026-01-04T00:00:00.000Z', []),
      fail,
    );
    expect(other.comparison).to.equal(undefined);
    const anonymous = await withComparison(
      history,
      { ...site, caller: 'ip:10.0.0.0/24', id: 'c1' },
      result('2026-01-04T00:00:00.000Z', []),
      fail,
    );
    expect(anonymous.comparison).to.equal(undefined);
    await history.close();
  });
});
