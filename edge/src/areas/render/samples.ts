/**
 * The sandbox's fixed replies for renders, typed as the service's ts-proto replies: the compiler
 * checks them against the protos, and the area's presenters turn them into the answers
 * (docs/decisions/0207-sandbox-keys.md). The sandbox's clients (edge/src/sandbox/clients.ts) serve
 * them.
 */
import type { ScreenshotResponse, UrlToPdfResponse } from '@webutil/proto/webutil/render/v1/render';
import { SAMPLE_FILES } from '../../sandbox/files.js';

export const screenshot: ScreenshotResponse = {
  filename: SAMPLE_FILES.screenshot.name,
  sizeBytes: String(SAMPLE_FILES.screenshot.bytes.length),
  format: 'png',
  fileExtension: 'png',
  clipped: false,
  durationMs: 0,
  cacheHit: false,
  timings: [{ stage: 'total', durationMs: 0 }],
};

export const urlToPdf: UrlToPdfResponse = {
  filename: SAMPLE_FILES.pdf.name,
  sizeBytes: String(SAMPLE_FILES.pdf.bytes.length),
  durationMs: 0,
  cacheHit: false,
  timings: [{ stage: 'total', durationMs: 0 }],
};
