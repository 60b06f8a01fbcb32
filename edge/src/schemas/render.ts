/** Screenshots and PDFs: the spec's render options and results (top-level envelope). */
import type { ScreenshotRequest, UrlToPdfRequest } from '@webutil/proto/webutil/render/v1/render';
import * as render from '@webutil/proto/webutil/render/v1/render.fields';
import { z } from 'zod';
import { count, targetUrl } from './common.js';
import { type EnumFacts, enumNumber, restEnum, restObject } from './from-proto.js';

/**
 * An optional option, one of its proto enum's values; absent, the service applies the spec's
 * default (the enum's zero value), which the contract states (`default`) so clients and the
 * playground's forms preselect it.
 */
const option = <E extends EnumFacts & { default: string }>(name: string, facts: E) =>
  restEnum(facts, { error: `${name} must be one of ${Object.keys(facts.values).join(', ')}` })
    .optional()
    .meta({ default: facts.default, description: `Default ${facts.default}.` });

export const ScreenshotInput = z.object({
  url: targetUrl,
  format: option('format', render.ImageFormat),
  device: option('device', render.Device),
  colorScheme: option('colorScheme', render.ColorScheme),
});

export const PdfInput = z.object({
  url: targetUrl,
  deviceType: option('deviceType', render.Device),
  pageFormat: option('pageFormat', render.PageFormat),
  orientation: option('orientation', render.Orientation),
  theme: option('theme', render.ColorScheme),
});

/** The options as the render service takes them: each its enum's number, the default's (zero) when absent. */
export const screenshotRequest = (input: z.output<typeof ScreenshotInput>): ScreenshotRequest => ({
  url: input.url,
  format: enumNumber(render.ImageFormat, input.format ?? render.ImageFormat.default),
  device: enumNumber(render.Device, input.device ?? render.Device.default),
  colorScheme: enumNumber(render.ColorScheme, input.colorScheme ?? render.ColorScheme.default),
});

export const pdfRequest = (input: z.output<typeof PdfInput>): UrlToPdfRequest => ({
  url: input.url,
  deviceType: enumNumber(render.Device, input.deviceType ?? render.Device.default),
  pageFormat: enumNumber(render.PageFormat, input.pageFormat ?? render.PageFormat.default),
  orientation: enumNumber(render.Orientation, input.orientation ?? render.Orientation.default),
  theme: enumNumber(render.ColorScheme, input.theme ?? render.ColorScheme.default),
});

const filename = { description: 'Download it from /api/uploads/<filename> for about 5 minutes.' };
const sizeBytes = { value: count };
const durationMs = { value: count, description: 'Total server-side time.' };
/** The cache flag and the stage timings are the route's response headers (presenters/render.ts). */
const headers = {
  cacheHit: 'the X-Screenshot-Cache / X-Pdf-Cache header',
  timings: 'the Server-Timing header',
};

export const ScreenshotResult = restObject(render.ScreenshotResponse, {
  id: 'ScreenshotResult',
  fields: {
    filename,
    sizeBytes,
    format: { value: restEnum(render.ImageFormat) },
    fileExtension: { value: z.enum(['png', 'jpg', 'webp']) },
    clipped: { description: 'The page was taller than the capture cap (16,000 device pixels).' },
    durationMs,
  },
  omit: headers,
});

export const PdfResult = restObject(render.UrlToPdfResponse, {
  id: 'PdfResult',
  fields: { filename, sizeBytes, durationMs },
  omit: headers,
});
