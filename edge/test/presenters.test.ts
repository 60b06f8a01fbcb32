import type { LinkRecord } from '@webutil/proto/webutil/crawl/v1/crawl';
import { expect } from 'chai';
import type { Context } from 'koa';
import { z } from 'zod';
import { presentNewKey, presentUsage } from '../src/areas/billing/presenters.js';
import { NewApiKey, Quota, UsageList } from '../src/areas/billing/schemas.js';
import { withDownloadUrl } from '../src/areas/bookmark/presenters.js';
import { BrokenLinksResult } from '../src/areas/crawl/schemas.js';
import { pdfHeaders, screenshotHeaders } from '../src/areas/render/presenters.js';
import { presenter } from '../src/rest/message.js';

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
    fragments: [],
    element: 'a',
  };
  const result = {
    url: 'https://example.com/',
    scannedAt: '2025-01-31T12:00:00.000Z',
    totalLinks: 1,
    checkedLinks: 1,
    truncated: false,
    healthScore: 0,
    grade: 'F',
    summary: { ok: 0, warnings: 0, broken: 1, info: 0, internal: 1, external: 0, resources: 0 },
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
      fragments: [],
      element: 'a',
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

/** The per-route presenters (edge/src/areas/<area>/presenters.ts), where the spec's shape differs from the reply. */
describe('per-route presenters', () => {
  const ctx = { publicBaseUrl: 'https://api.example.test' } as Context;

  it('gives a stored file its absolute downloadUrl under the public base', () => {
    const reply = { storedName: 'Ab3.xbel', fileName: 'b.xbel', message: 'Decrypted' };
    expect(withDownloadUrl('/xbel-decrypt/download')(reply, ctx)).to.deep.equal({
      ...reply,
      downloadUrl: 'https://api.example.test/v1/xbel-decrypt/download/Ab3.xbel',
    });
  });

  it('turns usage times from epoch milliseconds into ISO 8601', () => {
    const entries = [
      { operation: 'down-check', credits: 1, atMs: '1738324800000', target: 'https://example.test/' },
      { operation: 'xbel-decrypt', credits: 1, atMs: '1738324800000' },
    ];
    expect(presentUsage({ entries })).to.deep.equal({
      usage: [
        { operation: 'down-check', credits: 1, at: '2025-01-31T12:00:00.000Z', target: 'https://example.test/' },
        { operation: 'xbel-decrypt', credits: 1, at: '2025-01-31T12:00:00.000Z', target: null },
      ],
    });
    expect(() => presenter(UsageList)(presentUsage({ entries }))).to.not.throw();
  });

  it('shows a new key’s record with the full key beside it', () => {
    const key = {
      id: 'k1',
      name: 'ci',
      prefix: 'wu_live_AbCd',
      createdAt: '2025-01-31T12:00:00.000Z',
      lastUsedAt: undefined,
      revokedAt: undefined,
      creditLimit: undefined,
      expiresAt: undefined,
      allowedOperations: [],
      creditsSpentThisCycle: 0,
      mode: 'live',
    };
    const shown = presenter(NewApiKey)(presentNewKey({ key, secret: 'wu_live_AbCd.secret' }));
    expect(shown).to.deep.equal({
      ...key,
      lastUsedAt: null,
      revokedAt: null,
      creditLimit: null,
      expiresAt: null,
      key: 'wu_live_AbCd.secret',
    });
  });

  it('shows a limited key’s own limits', () => {
    const key = {
      id: 'k2',
      name: 'shop',
      prefix: 'wu_live_EfGh',
      createdAt: '2025-01-31T12:00:00.000Z',
      lastUsedAt: '2025-02-01T08:00:00.000Z',
      revokedAt: undefined,
      creditLimit: 40,
      expiresAt: '2025-03-01T00:00:00.000Z',
      allowedOperations: ['screenshot'],
      creditsSpentThisCycle: 12,
      mode: 'live',
    };
    const shown = presenter(NewApiKey)(presentNewKey({ key, secret: 'wu_live_EfGh.secret' }));
    expect(shown).to.deep.equal({ ...key, revokedAt: null, key: 'wu_live_EfGh.secret' });
  });

  it('states a render’s cache, clipping and stages in headers', () => {
    const timings = [
      { stage: 'queue', durationMs: 0.4 },
      { stage: 'total', durationMs: 612.9 },
    ];
    const reply = { filename: 'a.png', sizeBytes: '1', format: 'png', fileExtension: 'png', durationMs: 613 };
    expect(screenshotHeaders({ ...reply, clipped: true, cacheHit: false, timings })).to.deep.equal({
      'X-Screenshot-Cache': 'MISS',
      'X-Screenshot-Clipped': 'true',
      'Server-Timing': 'queue;dur=0.4, total;dur=612.9',
    });
    expect(pdfHeaders({ filename: 'a.pdf', sizeBytes: '1', durationMs: 613, cacheHit: true, timings })).to.deep.equal({
      'X-Pdf-Cache': 'HIT',
      'Server-Timing': 'queue;dur=0.4, total;dur=612.9',
    });
  });
});
