/**
 * Each kind's operation as a run performs it: the RPC its route calls, sent the request the edge
 * built for the monitor (`requestJson`), and the answer kept as the route's `data`, which the
 * comparisons read (docs/decisions/0461-monitor-runs-and-their-billing.md).
 */
import type { ArtifactStore } from '@webutil/kit/artifacts';
import { type GetBrokenLinkCrawlResponse, StartBrokenLinkCrawlRequest } from '@webutil/proto/webutil/crawl/v1/crawl';
import { DownCheckRequest, MetaScanRequest } from '@webutil/proto/webutil/metascan/v1/metascan';
import { ScreenshotRequest } from '@webutil/proto/webutil/render/v1/render';
import { type Certificate, SslScanRequest, type SslScanResponse } from '@webutil/proto/webutil/tlsscan/v1/tlsscan';
import type { MonitorKind } from './bounds.js';
import type { RunClients } from './clients.js';
import { compareResults, type RunChanges } from './run-changes.js';
import { DEFAULT_CHANGE_THRESHOLD_PERCENT, diffScreenshots } from './screenshot-diff.js';

/** What a run of each kind costs (its route's credits) and how long its call may take (its route's timeout). */
export const KIND_RUNS: Record<MonitorKind, { credits: number; timeoutMs: number }> = {
  'down-check': { credits: 1, timeoutMs: 30_000 },
  'ssl-scan': { credits: 1, timeoutMs: 30_000 },
  'meta-scan': { credits: 1, timeoutMs: 45_000 },
  'broken-links-crawl': { credits: 2, timeoutMs: 15_000 },
  screenshot: { credits: 2, timeoutMs: 60_000 },
};

export interface OperationContext {
  clients: RunClients;
  images: ArtifactStore;
  requestId: string;
  /** The previous run's result (undefined: the first run, or none kept one). */
  previous: unknown;
  /** The monitor's alert rules (MonitorAlerts, JSON-parsed). */
  rules: { expiryDays?: number[]; changeThresholdPercent?: number };
  intervalSeconds: number;
  /** Spends the run's hold: called once the operation stands (a crawl's once its job is queued). */
  charge(): Promise<void>;
  /** A crawl's job is asked for this often. */
  crawlPollMs: number;
  /** A crawl not finished by then fails the run. */
  crawlDeadlineMs: number;
  /** Told which replica answered a down-check (its re-check goes to another, decision 0486). */
  onPeer?: (peer: string) => void;
}

export interface Performed {
  /** The route's `data`. */
  result: Record<string, unknown>;
  verdict?: string;
  responseTimeMs?: number;
  reason: string;
  changes?: RunChanges & { diffImage?: string };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The spec names the certificate dates valid_from and valid_to (as the edge's ssl-scan presenter does). */
const withSpecDates = ({ validFrom, validTo, ...rest }: Certificate) => ({
  ...rest,
  valid_from: validFrom,
  valid_to: validTo,
});

const sslData = (reply: SslScanResponse) => ({
  ...reply,
  certificate: reply.certificate && withSpecDates(reply.certificate),
  chain: reply.chain.map(withSpecDates),
});

/** Performs one run of a monitor of `kind`; throws when the operation failed (nothing is then spent). */
export async function performOperation(
  kind: MonitorKind,
  requestJson: string,
  ctx: OperationContext,
): Promise<Performed> {
  const request = JSON.parse(requestJson) as object;
  const options = { requestId: ctx.requestId, timeoutMs: KIND_RUNS[kind].timeoutMs };
  switch (kind) {
    case 'down-check': {
      const reply = await ctx.clients.metaScan.downCheck(DownCheckRequest.fromPartial(request), {
        ...options,
        onPeer: ctx.onPeer,
      });
      return {
        result: reply as unknown as Record<string, unknown>,
        verdict: reply.verdict,
        responseTimeMs: reply.responseTimeMs,
        reason: reply.reason,
      };
    }
    case 'ssl-scan': {
      const result = sslData(await ctx.clients.tlsScan.sslScan(SslScanRequest.fromPartial(request), options));
      return { result, reason: `grade ${result.securityGrade}`, changes: compare(kind, ctx, result) };
    }
    case 'meta-scan': {
      const reply = await ctx.clients.metaScan.metaScan(MetaScanRequest.fromPartial(request), options);
      const result = reply as unknown as Record<string, unknown>;
      return { result, reason: `score ${reply.finalScore}`, changes: compare(kind, ctx, result) };
    }
    case 'broken-links-crawl':
      return crawl(StartBrokenLinkCrawlRequest.fromPartial(request), ctx, options);
    case 'screenshot': {
      // A run looks at the page now: never an identical capture the render cache still holds.
      const given = ScreenshotRequest.fromPartial(request);
      return screenshot({ ...given, page: { ...given.page, cacheTtlSeconds: 0 } as typeof given.page }, ctx, options);
    }
  }
}

function compare(kind: MonitorKind, ctx: OperationContext, result: unknown): RunChanges | undefined {
  return compareResults(kind, ctx.previous, result, { expiryDays: ctx.rules.expiryDays });
}

/** A crawl is a job: started (and charged, as the edge charges its start), then asked for until it ends. */
async function crawl(
  request: StartBrokenLinkCrawlRequest,
  ctx: OperationContext,
  options: { requestId: string; timeoutMs: number },
): Promise<Performed> {
  const { jobId } = await ctx.clients.crawl.startBrokenLinkCrawl(request, options);
  await ctx.charge();
  const deadline = Date.now() + ctx.crawlDeadlineMs;
  for (;;) {
    const job: GetBrokenLinkCrawlResponse = await ctx.clients.crawl.getBrokenLinkCrawl({ jobId }, options);
    if (job.status === 'failed') throw new Error(`the crawl failed: ${job.error?.message ?? 'no reason given'}`);
    if (job.status === 'done' && job.result) {
      const result = { jobId, ...job.result } as unknown as Record<string, unknown>;
      return {
        result,
        reason: `${job.result.summary?.broken ?? 0} broken links`,
        changes: compare('broken-links-crawl', ctx, result),
      };
    }
    if (Date.now() > deadline) throw new Error(`the crawl ${jobId} did not finish in time`);
    await sleep(ctx.crawlPollMs);
  }
}

async function readAll(chunks: AsyncIterable<{ chunk: Uint8Array }> | AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of chunks) parts.push(Buffer.from(part instanceof Uint8Array ? part : part.chunk));
  return Buffer.concat(parts);
}

const IMAGE_TYPES: Record<string, string> = { png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp' };
const DAY_MS = 86_400_000;

/**
 * A capture is kept in the monitor's own image store (render's artifacts live minutes): the next run
 * compares with it, the baseline. The diff image is kept beside it while the run is in the history.
 */
async function screenshot(
  request: ScreenshotRequest,
  ctx: OperationContext,
  options: { requestId: string; timeoutMs: number },
): Promise<Performed> {
  const reply = await ctx.clients.render.screenshot(request, options);
  const bytes = await readAll(ctx.clients.render.readArtifact({ filename: reply.filename }, options));
  const ttlMs = 2 * ctx.intervalSeconds * 1000 + 30 * DAY_MS;
  const contentType = IMAGE_TYPES[reply.format] ?? 'application/octet-stream';
  const image = await ctx.images.put({ body: bytes, extension: reply.fileExtension, contentType, ttlMs });
  const result = {
    format: reply.format,
    sizeBytes: bytes.length,
    clipped: reply.clipped,
    durationMs: reply.durationMs,
    image: image.name,
  };
  const baselineName = (ctx.previous as { image?: string } | undefined)?.image;
  const baseline = baselineName ? await ctx.images.open(baselineName) : undefined;
  if (!baseline) return { result, reason: 'first capture (the baseline)' };
  const threshold = ctx.rules.changeThresholdPercent ?? DEFAULT_CHANGE_THRESHOLD_PERCENT;
  const { diff, diffPng } = await diffScreenshots(await readAll(baseline.body), bytes, threshold);
  const stored = await ctx.images.put({ body: diffPng, extension: 'png', contentType: 'image/png', ttlMs });
  return {
    result,
    reason: `${diff.changedPercent}% of pixels changed`,
    changes: { ...diff, diffImage: stored.name },
  };
}
