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

/** Each screenshot format's content type. */
const IMAGE_TYPES: Record<string, string> = { png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp' };

/** With the file as the answer (Accept names its type), the spec's fields are these headers. */
export const screenshotFile = {
  contentTypes: Object.values(IMAGE_TYPES),
  contentType: (reply: ScreenshotResponse) => IMAGE_TYPES[reply.format] ?? 'application/octet-stream',
  name: (reply: ScreenshotResponse) => reply.filename,
  headers: (reply: ScreenshotResponse) => ({
    'X-Filename': reply.filename,
    'X-Size-Bytes': reply.sizeBytes,
    'X-Format': reply.format,
    'X-File-Extension': reply.fileExtension,
    'X-Clipped': String(reply.clipped),
    'X-Duration-Ms': String(reply.durationMs),
  }),
  fieldHeaders: {
    'X-Filename': '`filename`: the stored file, still downloadable from /api/uploads/<filename>.',
    'X-Size-Bytes': '`sizeBytes`.',
    'X-Format': '`format`.',
    'X-File-Extension': '`fileExtension`.',
    'X-Clipped': '`clipped`.',
    'X-Duration-Ms': '`durationMs`.',
  },
};

export const pdfFile = {
  contentTypes: ['application/pdf'],
  contentType: () => 'application/pdf',
  name: (reply: UrlToPdfResponse) => reply.filename,
  headers: (reply: UrlToPdfResponse) => ({
    'X-Filename': reply.filename,
    'X-Size-Bytes': reply.sizeBytes,
    'X-Duration-Ms': String(reply.durationMs),
  }),
  fieldHeaders: {
    'X-Filename': '`filename`: the stored file, still downloadable from /api/uploads/<filename>.',
    'X-Size-Bytes': '`sizeBytes`.',
    'X-Duration-Ms': '`durationMs`.',
  },
};
