import {
  type AddressPolicy,
  type CallContext,
  type CallerSlots,
  type LookupHost,
  notFound,
  parseTargetUrl,
  resolveTarget,
  resourceExhausted,
  type Sharer,
  targetFailure,
} from '@webutil/kit';
import { type ArtifactInfo, type ArtifactStore, sendArtifact } from '@webutil/kit/artifacts';
import type {
  ReadArtifactRequest,
  ReadArtifactResponse,
  RenderCaller,
  ScreenshotRequest,
  ScreenshotResponse,
  UrlToPdfRequest,
  UrlToPdfResponse,
} from '@webutil/proto/webutil/render/v1/render';
import type { BrowserPool } from './browser-pool.js';
import { cacheKey, cacheTtlMs, IMAGE_FORMATS, pdfOptions, screenshotOptions } from './options.js';
import { type PageDeps, type RenderJob, renderPage } from './render-page.js';
import { PDF_STAGES, SCREENSHOT_STAGES, StageClock } from './stage-clock.js';

export interface RenderDeps {
  pool: BrowserPool;
  store: ArtifactStore;
  policy: AddressPolicy;
  /** How target names are resolved; the system resolver when undefined. */
  lookup: LookupHost | undefined;
  page: PageDeps;
  /** Longest a render waits for a browser before it is refused (RENDER_BUSY). */
  queueWaitMs: number;
  /** How long a result file can be downloaded. */
  fileTtlMs: number;
  /** A result rendered this recently answers an identical request without the browser. */
  cacheWindowMs: number;
  /** Each caller's renders in flight here, from every edge (the edge's own count is per edge). */
  callers: CallerSlots;
}

/** A caller's renders past its bound are refused before they take a browser or a place in the queue. */
function callerSlot(caller: RenderCaller | undefined, callers: CallerSlots): () => void {
  if (!caller?.subject || caller.rendersInFlight <= 0) return () => undefined;
  const release = callers.take(caller.subject, caller.rendersInFlight);
  if (release) return release;
  throw resourceExhausted(
    'CONCURRENCY_LIMITED',
    `too many renders in flight: this caller's plan allows ${caller.rendersInFlight} at a time ` +
      '(screenshot and url-to-pdf together); retry when one has finished',
    2,
  );
}

/**
 * The caller's place in the pool's fair queue: its plan's bound is its weight, so an Enterprise
 * caller's share is eight times an anonymous one's (docs/decisions/0261-fair-shares.md).
 */
function sharer(caller: RenderCaller | undefined): Sharer | undefined {
  return caller?.subject ? { subject: caller.subject, weight: Math.max(1, caller.rendersInFlight) } : undefined;
}

const PDF = { extension: 'pdf', contentType: 'application/pdf' };
/** The least time a cache hit leaves to download its file. */
const HIT_DOWNLOAD_MS = 60_000;

export async function screenshot(
  request: ScreenshotRequest,
  deps: RenderDeps,
  ctx: CallContext,
): Promise<ScreenshotResponse> {
  const url = parseTargetUrl(request.url);
  const options = screenshotOptions(request);
  const job: RenderJob = { kind: 'screenshot', options };
  const { info, clipped, cacheHit, clock } = await produce(
    url,
    job,
    cacheTtlMs(request.page),
    deps,
    ctx,
    request.caller,
  );
  const extension = IMAGE_FORMATS[options.format].extension;
  return {
    filename: info.name,
    sizeBytes: String(info.sizeBytes),
    format: options.format,
    fileExtension: extension,
    clipped,
    durationMs: Math.round(clock.totalMs()),
    cacheHit,
    timings: clock.timings(SCREENSHOT_STAGES),
  };
}

export async function urlToPdf(
  request: UrlToPdfRequest,
  deps: RenderDeps,
  ctx: CallContext,
): Promise<UrlToPdfResponse> {
  const url = parseTargetUrl(request.url);
  const options = pdfOptions(request, deps.page.limits.maxPdfPages);
  const job: RenderJob = { kind: 'pdf', options };
  const { info, cacheHit, clock } = await produce(url, job, cacheTtlMs(request.page), deps, ctx, request.caller);
  return {
    filename: info.name,
    sizeBytes: String(info.sizeBytes),
    durationMs: Math.round(clock.totalMs()),
    cacheHit,
    timings: clock.timings(PDF_STAGES),
  };
}

/**
 * A result file for the job: the one rendered for an identical request within the cache window
 * (or the caller's cacheTtl: 0 always renders, and a hit leaves at least a minute to download),
 * else a new render. The target is resolved and checked before a browser is taken, so a blocked
 * or unresolvable URL is answered at once; the egress proxy checks every connection again.
 */
async function produce(
  url: URL,
  job: RenderJob,
  ttlMs: number | undefined,
  deps: RenderDeps,
  ctx: CallContext,
  caller?: RenderCaller,
) {
  const clock = new StageClock();
  const key = cacheKey(job.kind, url, job.options);
  // A caller's cacheTtl reaches back only as far as a hit still leaves a minute to download the file.
  const freshForMs = ttlMs === undefined ? deps.cacheWindowMs : Math.min(ttlMs, deps.fileTtlMs - HIT_DOWNLOAD_MS);
  const cached = freshForMs > 0 ? await deps.store.findCached(key) : undefined;
  if (cached && Date.now() - cached.createdAt <= freshForMs) {
    return { info: cached, clipped: cached.attributes?.clipped === 'true', cacheHit: true, clock };
  }
  await resolveTarget(url.hostname, deps.policy, deps.lookup).catch((err: unknown) => {
    throw targetFailure(err);
  });
  const releaseSlot = callerSlot(caller, deps.callers);
  let rendered: Awaited<ReturnType<typeof renderPage>>;
  try {
    const lease = await deps.pool.acquire(ctx.signal, Date.now() + deps.queueWaitMs, sharer(caller));
    clock.end('queue');
    try {
      rendered = await renderPage(lease, url, job, deps.page, clock, ctx.signal);
    } finally {
      lease.release();
    }
  } finally {
    releaseSlot();
  }
  const format = job.kind === 'pdf' ? PDF : IMAGE_FORMATS[job.options.format];
  const info: ArtifactInfo = await deps.store.put({
    body: rendered.body,
    extension: format.extension,
    contentType: format.contentType,
    ttlMs: deps.fileTtlMs,
    cacheKey: key,
    attributes: { clipped: String(rendered.clipped) },
  });
  return { info, clipped: rendered.clipped, cacheHit: false, clock };
}

/** Streams a result file: the first message carries its facts. */
export async function readArtifact(
  request: ReadArtifactRequest,
  store: ArtifactStore,
  ctx: CallContext,
  send: (message: ReadArtifactResponse) => Promise<void>,
): Promise<void> {
  const found = await store.open(request.filename);
  if (!found) {
    throw notFound('FILE_NOT_FOUND', 'no such file, or its download time is over');
  }
  await sendArtifact(found, send, ctx.signal);
}
