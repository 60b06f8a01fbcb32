/** The render routes' extra headers: the cache and clipping flags, and the service's measured stages. */
import type { ScreenshotResponse, StageTiming, UrlToPdfResponse } from '@webutil/proto/webutil/render/v1/render';

/** Server-Timing from the service's measured stages: `queue;dur=0.4, page;dur=150.2, …, total;dur=612.9`. */
const serverTiming = (timings: StageTiming[]) => timings.map((t) => `${t.stage};dur=${t.durationMs}`).join(', ');

export const screenshotHeaders = (reply: ScreenshotResponse) => ({
  'X-Screenshot-Cache': reply.cacheHit ? 'HIT' : 'MISS',
  'X-Screenshot-Clipped': String(reply.clipped),
  'Server-Timing': serverTiming(reply.timings),
});

export const pdfHeaders = (reply: UrlToPdfResponse) => ({
  'X-Pdf-Cache': reply.cacheHit ? 'HIT' : 'MISS',
  'Server-Timing': serverTiming(reply.timings),
});
