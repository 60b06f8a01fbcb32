import type { LinkRecord } from '@webutil/proto/webutil/crawl/v1/crawl';
import { expect } from 'chai';
import { z } from 'zod';
import { presenter } from '../src/presenters/message.js';
import { Quota } from '../src/schemas/billing.js';
import { BrokenLinksResult } from '../src/schemas/crawl.js';

describe('the generic presenter (ts-proto message -> the spec’s JSON)', () => {
  const record: LinkRecord = {
    url: 'https://example.com/a',
    originalHref: '/a',
    text: 'A',
    type: 'internal',
    rel: undefined,
    statusCode: undefined,
    statusText: 'ECONNREFUSED',
    severity: 'broken',
    reason: 'connection refused',
    category: 'Network error',
    redirected: false,
    finalUrl: undefined,
    responseTimeMs: undefined,
    errorCode: 'ECONNREFUSED',
    sources: [],
    sourceCount: undefined,
  };
  const result = {
    url: 'https://example.com/',
    scannedAt: '2025-01-31T12:00:00.000Z',
    totalLinks: 1,
    checkedLinks: 1,
    truncated: false,
    healthScore: 0,
    grade: 'F',
    summary: { ok: 0, warnings: 0, broken: 1, info: 0, internal: 1, external: 0 },
    statusBreakdown: [{ code: 'ECONNREFUSED', label: 'Connection refused', severity: 'broken', count: 1 }],
    links: [record],
  };

  it('writes null for an absent nullable field, omits an absent optional one, drops fields the spec lacks', () => {
    const [link] = presenter(BrokenLinksResult)(result).links;
    expect(link).to.deep.equal({
      url: 'https://example.com/a',
      originalHref: '/a',
      text: 'A',
      type: 'internal',
      rel: null,
      statusCode: null,
      statusText: 'ECONNREFUSED',
      severity: 'broken',
      reason: 'connection refused',
      category: 'Network error',
      redirected: false,
      errorCode: 'ECONNREFUSED',
    });
    expect(Object.keys(link ?? {})).to.not.include.members(['sources', 'sourceCount', 'finalUrl', 'responseTimeMs']);
  });

  it('keeps present optional values, including falsy ones', () => {
    const [link] = presenter(BrokenLinksResult)({
      ...result,
      links: [{ ...record, statusCode: 0, responseTimeMs: 0, rel: '' }],
    }).links;
    expect(link).to.include({ statusCode: 0, responseTimeMs: 0, rel: '' });
  });

  it('omits the plan of an anonymous quota and keeps it otherwise', () => {
    const present = presenter(Quota);
    expect(present({ callerKind: 'anonymous', limit: 10, remaining: 9 })).to.deep.equal({
      callerKind: 'anonymous',
      limit: 10,
      remaining: 9,
    });
    expect(present({ callerKind: 'apikey', plan: 'STARTER', limit: 3000, remaining: 2999 })).to.have.property(
      'plan',
      'STARTER',
    );
  });

  it('turns an int64 (a string from ts-proto) into a number', () => {
    const present = presenter(z.strictObject({ sizeBytes: z.number().int() }));
    expect(present({ sizeBytes: '9007199254740' })).to.deep.equal({ sizeBytes: 9007199254740 });
  });

  it('refuses a reply that lacks a required field, naming it', () => {
    const { summary: _, ...withoutSummary } = result;
    expect(() => presenter(BrokenLinksResult)(withoutSummary)).to.throw(/summary/);
    expect(() => presenter(BrokenLinksResult)({ ...result, links: [{ ...record, url: undefined }] })).to.throw(
      /links\[\]\.url/,
    );
  });
});
