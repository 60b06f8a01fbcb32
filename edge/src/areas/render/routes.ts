/** The render service's routes: the result is a file, downloaded from /api/uploads/<filename>. */
import { z } from 'zod';
import { renderCaller } from '../../caller.js';
import type { Clients } from '../../clients.js';
import type { CallOptions } from '../../grpc-clients.js';
import { required } from '../../rest/common.js';
import { type DownloadSpec, download, type RouteSpec, route } from '../../route-spec.js';
import { pdfFile, pdfHeaders, screenshotFile, screenshotHeaders } from './presenters.js';
import { PdfInput, PdfResult, pdfRequest, ScreenshotInput, ScreenshotResult, screenshotRequest } from './schemas.js';

/**
 * A render: 400 when the page cannot be had, the service refuses an option (a selector the browser
 * cannot parse, page ranges past the document) or no element matches a selector; 408 past the
 * render budget, 503 (with Retry-After) when every browser is busy or the one rendering it stopped.
 */
export const RENDER_ERRORS = {
  target_blocked: 400,
  target_unreachable: 400,
  not_renderable: 400,
  invalid_option: 400,
  invalid_selector: 400,
  selector_not_found: 400,
  render_timeout: 408,
  render_busy: 503,
  browser_crashed: 503,
  concurrency_limited: 429,
  // blockAds on a render service installed without its filter lists (decision 0192).
  ads_lists_unavailable: 503,
};
/** A render's stored file, for the answer that is the file itself (Accept: its content type). */
const readRenderFile = (c: Clients, reply: { filename: string }, options: CallOptions) =>
  c.render.readArtifact({ filename: reply.filename }, options);
/** A render may wait 15 s for a browser, then has 30 s. */
export const RENDER_TIMEOUT_MS = 60_000;

export const renderRoutes: RouteSpec[] = [
  route({
    method: 'POST',
    path: '/screenshot',
    operation: 'screenshot',
    summary: 'A full-page image of a URL in a headless browser (png, jpeg or webp; desktop or mobile).',
    credits: 2,
    render: true,
    input: ScreenshotInput,
    output: ScreenshotResult,
    envelope: 'top-level',
    errors: RENDER_ERRORS,
    timeoutMs: RENDER_TIMEOUT_MS,
    call: (c, input, options, caller) =>
      c.render.screenshot({ ...screenshotRequest(input), caller: renderCaller(caller) }, options),
    headers: screenshotHeaders,
    file: { ...screenshotFile, read: readRenderFile },
    successHeaders: {
      'X-Screenshot-Cache': 'HIT when served from the short-lived result cache without the browser, else MISS.',
      'X-Screenshot-Clipped': 'true or false, as `clipped`.',
      'Server-Timing': 'Stages queue, page, nav, net, scroll, settle, encode and total, in ms.',
    },
  }),
  route({
    method: 'POST',
    path: '/url-to-pdf',
    operation: 'url-to-pdf',
    summary: 'A URL printed to a paginated PDF in a headless browser (paper format, orientation, theme).',
    credits: 2,
    render: true,
    input: PdfInput,
    output: PdfResult,
    envelope: 'top-level',
    errors: RENDER_ERRORS,
    timeoutMs: RENDER_TIMEOUT_MS,
    call: (c, input, options, caller) =>
      c.render.urlToPdf({ ...pdfRequest(input), caller: renderCaller(caller) }, options),
    headers: pdfHeaders,
    file: { ...pdfFile, read: readRenderFile },
    successHeaders: {
      'X-Pdf-Cache': 'HIT when served from the short-lived result cache without the browser, else MISS.',
      'Server-Timing': 'Stages queue, page, nav, net, scroll, settle, render and total, in ms.',
    },
  }),
];

/** A render's file, streamed from the render service: free, no credential needed. */
export const renderDownloads: DownloadSpec[] = [
  download({
    paths: ['/api/uploads/:filename'],
    operation: 'render-download',
    summary: 'A rendered screenshot or PDF by the filename its render returned; kept about 5 minutes.',
    input: z.object({ filename: required('filename') }),
    nameParam: 'filename',
    disposition: 'inline',
    contentTypes: ['image/png', 'image/jpeg', 'image/webp', 'application/pdf'],
    errors: { file_not_found: 404 },
    timeoutMs: 60_000,
    call: (c, input, options) => c.render.readArtifact({ filename: input.filename }, options),
  }),
];
