import { letterGrade } from '@webutil/kit';
import { expect } from 'chai';
import { type CheckOutcome, gradeLink, scoreCard, scoreOf } from '../src/checking/grade.js';
import type { FoundLink } from '../src/model.js';

const link = (over: Partial<FoundLink> = {}): FoundLink => ({
  url: 'https://site.test/a',
  originalHref: '/a',
  text: 'A',
  rel: undefined,
  type: 'internal',
  scheme: 'https',
  element: 'a',
  ...over,
});
const answered = (status: number, over: Partial<CheckOutcome> = {}): CheckOutcome => ({
  status,
  firstStatus: status,
  redirects: 0,
  responseTimeMs: 12,
  ...over,
});

describe('grade: one link', () => {
  const cases: [string, CheckOutcome, string, string, string][] = [
    ['200', answered(200), 'ok', '2xx Success', '200'],
    ['204', answered(204), 'ok', '2xx Success', '204'],
    ['401', answered(401), 'warning', '4xx Client error', '401'],
    ['403', answered(403), 'warning', '4xx Client error', '403'],
    ['429', answered(429, { retryAfterSeconds: 120 }), 'warning', '4xx Client error', '429'],
    ['404', answered(404), 'broken', '4xx Client error', '404'],
    ['410', answered(410), 'broken', '4xx Client error', '410'],
    ['400', answered(400), 'broken', '4xx Client error', '400'],
    ['500', answered(500), 'broken', '5xx Server error', '500'],
    ['503', answered(503), 'broken', '5xx Server error', '503'],
    ['999', answered(999), 'warning', 'Unexpected status', '999'],
    ['a soft 404', answered(200, { soft404: true }), 'broken', 'Soft 404', 'SOFT_404'],
    ['a bot wall', answered(403, { botWall: 'Cloudflare' }), 'warning', 'Bot protection', 'BOT_WALL'],
    [
      'a redirect to a 200',
      answered(200, { firstStatus: 301, redirects: 2, finalUrl: 'https://site.test/b' }),
      'warning',
      '3xx Redirect',
      '301',
    ],
    [
      'a redirect to a 404',
      answered(404, { firstStatus: 302, redirects: 1, finalUrl: 'https://site.test/b' }),
      'broken',
      '4xx Client error',
      '404',
    ],
    [
      'a redirect loop',
      answered(302, { redirects: 10, finalUrl: 'https://site.test/a', redirectTrouble: 'loop' }),
      'broken',
      'Redirect loop',
      'ERR_TOO_MANY_REDIRECTS',
    ],
    [
      'DNS failure',
      { redirects: 0, error: { kind: 'dns', code: 'ENOTFOUND', message: 'nope' } },
      'broken',
      'DNS error',
      'ENOTFOUND',
    ],
    [
      'refused',
      { redirects: 0, error: { kind: 'connect', code: 'ECONNREFUSED', message: 'refused' } },
      'broken',
      'Connection error',
      'ECONNREFUSED',
    ],
    [
      'time-out',
      { redirects: 0, error: { kind: 'timeout', code: 'ETIMEDOUT', message: 'slow' } },
      'broken',
      'Timeout',
      'ETIMEDOUT',
    ],
    [
      'an expired certificate',
      { redirects: 0, error: { kind: 'tls', code: 'CERT_HAS_EXPIRED', message: 'certificate has expired' } },
      'broken',
      'TLS error',
      'CERT_HAS_EXPIRED',
    ],
    [
      'a private address',
      { redirects: 0, error: { kind: 'blocked', code: 'ETARGETBLOCKED', message: 'no' } },
      'info',
      'Not checked',
      'ETARGETBLOCKED',
    ],
  ];
  for (const [label, outcome, severity, category, code] of cases) {
    it(`${label}: ${severity}, ${category}, breakdown code ${code}`, () => {
      const { record, bucket } = gradeLink(link(), outcome);
      expect(record.severity).to.equal(severity);
      expect(record.category).to.equal(category);
      expect(bucket.code).to.equal(code);
      expect(record.reason).to.be.a('string').and.not.equal('');
    });
  }

  it('records the response facts: status, redirect target, time, error code', () => {
    const redirected = gradeLink(
      link(),
      answered(200, { firstStatus: 301, redirects: 1, finalUrl: 'https://site.test/b' }),
    ).record;
    expect(redirected).to.include({
      statusCode: 200,
      statusText: 'OK',
      redirected: true,
      finalUrl: 'https://site.test/b',
      responseTimeMs: 12,
    });
    expect(redirected.reason).to.contain('https://site.test/b');
    const failed = gradeLink(link(), { redirects: 0, error: { kind: 'dns', code: 'ENOTFOUND', message: 'x' } }).record;
    expect(failed.statusCode).to.equal(undefined);
    expect(failed.responseTimeMs).to.equal(undefined);
    expect(failed).to.include({ errorCode: 'ENOTFOUND', statusText: 'DNS lookup failed', redirected: false });
  });

  it('non-HTTP links are info and need no outcome; a malformed http URL is broken', () => {
    expect(
      gradeLink(link({ type: 'mailto', scheme: 'mailto', url: 'mailto:a@b.c' }), undefined).record.severity,
    ).to.equal('info');
    expect(gradeLink(link({ type: 'tel', scheme: 'tel', url: 'tel:1' }), undefined).bucket.code).to.equal('tel');
    expect(
      gradeLink(link({ type: 'other', scheme: 'javascript', url: 'javascript:void(0)' }), undefined).bucket.code,
    ).to.equal('javascript');
    expect(gradeLink(link({ type: 'other', scheme: 'http', url: 'http://[bad' }), undefined).record.severity).to.equal(
      'broken',
    );
  });

  it('an in-page anchor is info when its target exists and a warning when it does not', () => {
    const anchor = link({ type: 'anchor', url: 'https://site.test/#x', originalHref: '#x' });
    expect(gradeLink(anchor, undefined, [{ name: 'x', found: true }]).record.severity).to.equal('info');
    const missing = gradeLink(anchor, undefined, [{ name: 'x', found: false }]);
    expect(missing.record.severity).to.equal('warning');
    expect(missing.bucket.code).to.equal('MISSING_ANCHOR');
  });

  it('a missing fragment on a page that answered 200 is a warning', () => {
    const graded = gradeLink(link({ url: 'https://site.test/a#nope' }), answered(200), [
      { name: 'nope', found: false },
    ]);
    expect(graded.record).to.include({ severity: 'warning', statusCode: 200, category: 'Missing anchor' });
  });
});

describe('grade: score card', () => {
  it('counts severities and site membership, one breakdown row per code, most frequent first', () => {
    const links = [
      gradeLink(link(), answered(200)),
      gradeLink(link({ type: 'external' }), answered(200)),
      gradeLink(link({ type: 'external' }), answered(404)),
      gradeLink(link(), answered(200, { firstStatus: 301, redirects: 1, finalUrl: 'https://site.test/b' })),
      gradeLink(link({ type: 'mailto', scheme: 'mailto', url: 'mailto:x@y.z' }), undefined),
      gradeLink(link({ type: 'external', element: 'img' }), answered(200)),
    ];
    const card = scoreCard(links);
    expect(card.summary).to.deep.equal({
      ok: 3,
      warnings: 1,
      broken: 1,
      info: 1,
      internal: 2,
      external: 3,
      resources: 1,
    });
    expect(card.statusBreakdown.map((r) => [r.code, r.severity, r.count])).to.deep.equal([
      ['200', 'ok', 3],
      ['301', 'warning', 1],
      ['404', 'broken', 1],
      ['mailto', 'info', 1],
    ]);
    expect(card.healthScore).to.equal(scoreOf(card.summary));
    expect(card.grade).to.equal(letterGrade(card.healthScore));
  });

  it('scores: 100 with nothing scored or all ok, below 100 with any broken link, 0 at a third broken', () => {
    expect(scoreOf({ ok: 0, warnings: 0, broken: 0 })).to.equal(100);
    expect(scoreOf({ ok: 50, warnings: 0, broken: 0 })).to.equal(100);
    expect(scoreOf({ ok: 1999, warnings: 0, broken: 1 })).to.equal(99);
    expect(scoreOf({ ok: 90, warnings: 10, broken: 0 })).to.equal(96);
    expect(scoreOf({ ok: 95, warnings: 0, broken: 5 })).to.equal(88);
    expect(scoreOf({ ok: 2, warnings: 0, broken: 1 })).to.equal(17);
    expect(scoreOf({ ok: 1, warnings: 0, broken: 2 })).to.equal(0);
  });

  it('maps scores to A+ A B C D F at 97, 90, 80, 70, 60', () => {
    const grades = [100, 97, 96, 90, 89, 80, 79, 70, 69, 60, 59, 0].map(letterGrade);
    expect(grades).to.deep.equal(['A+', 'A+', 'A', 'A', 'B', 'B', 'C', 'C', 'D', 'D', 'F', 'F']);
  });
});
