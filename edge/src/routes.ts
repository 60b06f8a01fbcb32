/**
 * Every public route, in one place: method, path, operation, credits, input schema, the one RPC
 * it calls, how the reply is presented, and the per-route reason -> HTTP status exceptions.
 * Each route is served under both /v1 and /api/v1.
 */
import type { ExtractedLink, ExtractResult } from '@webutil/proto/webutil/crawl/v1/crawl';
import { z } from 'zod';
import { dataEnvelope } from './envelope.js';
import { route, type RouteSpec } from './pipeline.js';

/** A required string parameter with the spec's wording for a missing one. */
const required = (name: string) =>
  z
    .string({ error: (issue) => (issue.input === undefined ? `${name} is required` : `${name} must be a string`) })
    .trim()
    .min(1, `${name} is required`)
    .max(4096, `${name} is too long`);

const urlInput = z.object({ url: required('url') });

export const routes: RouteSpec[] = [
  route({
    method: 'GET',
    path: '/down-check',
    operation: 'down-check',
    credits: 1,
    input: urlInput,
    timeoutMs: 30_000,
    call: (c, input, options) => c.metaScan.downCheck({ url: input.url }, options),
    present: (r) =>
      ({
        body: dataEnvelope({
          url: r.url,
          testedFrom: r.testedFrom,
          httpsStatus: r.httpsStatus ?? null,
          responseTimeMs: r.responseTimeMs ?? null,
          ipAddress: r.ipAddress ?? null,
        }),
      }),
  }),
  route({
    method: 'GET',
    path: '/link-extract',
    operation: 'link-extract',
    credits: 1,
    input: urlInput,
    timeoutMs: 45_000,
    call: (c, input, options) => c.crawl.extractLinks({ url: input.url }, options),
    present: (r) => ({ body: dataEnvelope(presentExtractResult(r.result, false)) }),
  }),
];

function presentExtractResult(result: ExtractResult | undefined, crawl: boolean) {
  if (!result) throw new Error('service returned no result');
  return {
    url: result.url,
    scannedAt: result.scannedAt,
    totalLinks: result.totalLinks,
    truncated: result.truncated,
    counts: result.counts,
    links: result.links.map((link) => presentExtractedLink(link, crawl)),
  };
}

function presentExtractedLink(link: ExtractedLink, crawl: boolean) {
  const item = { url: link.url, originalHref: link.originalHref, text: link.text, rel: link.rel ?? null, type: link.type, scheme: link.scheme };
  return crawl ? { ...item, sources: link.sources, sourceCount: link.sourceCount ?? link.sources.length } : item;
}
