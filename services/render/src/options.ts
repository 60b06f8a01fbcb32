import { createHash } from 'node:crypto';
import { invalidArgument } from '@webutil/kit';
import type { PaperFormat } from 'puppeteer-core';
import type { DeviceName } from './devices.js';

/** What a screenshot request asks for, defaults applied. */
export interface ScreenshotOptions {
  format: ImageFormat;
  device: DeviceName;
  colorScheme: ColorScheme;
}

/** What a PDF request asks for, defaults applied. */
export interface PdfOptions {
  device: DeviceName;
  pageFormat: PaperFormat;
  landscape: boolean;
  colorScheme: ColorScheme;
}

export type ImageFormat = 'png' | 'jpeg' | 'webp';
export type ColorScheme = 'light' | 'dark';

/** Each image format's stored extension and content type. */
export const IMAGE_FORMATS: Record<ImageFormat, { extension: string; contentType: string }> = {
  png: { extension: 'png', contentType: 'image/png' },
  jpeg: { extension: 'jpg', contentType: 'image/jpeg' },
  webp: { extension: 'webp', contentType: 'image/webp' },
};

const DEVICES = ['desktop', 'mobile'] as const;
const SCHEMES = ['light', 'dark'] as const;
const PAGE_FORMATS = ['letter', 'legal', 'a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'a6'] as const;
const ORIENTATIONS = ['portrait', 'landscape'] as const;

/**
 * One option: absent means its default; anything else must be one of the allowed values exactly
 * (the spec's values are lower case; `PNG` is refused rather than guessed at).
 */
function pick<T extends string>(name: string, value: string | undefined, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw invalidArgument('INVALID_OPTION', `${name} must be one of ${allowed.join(', ')}`);
}

export function screenshotOptions(request: {
  format?: string | undefined;
  device?: string | undefined;
  colorScheme?: string | undefined;
}): ScreenshotOptions {
  return {
    format: pick('format', request.format, Object.keys(IMAGE_FORMATS) as ImageFormat[], 'png'),
    device: pick('device', request.device, DEVICES, 'desktop'),
    colorScheme: pick('colorScheme', request.colorScheme, SCHEMES, 'light'),
  };
}

export function pdfOptions(request: {
  deviceType?: string | undefined;
  pageFormat?: string | undefined;
  orientation?: string | undefined;
  theme?: string | undefined;
}): PdfOptions {
  return {
    device: pick('deviceType', request.deviceType, DEVICES, 'desktop'),
    pageFormat: pick('pageFormat', request.pageFormat, PAGE_FORMATS, 'a4'),
    landscape: pick('orientation', request.orientation, ORIENTATIONS, 'portrait') === 'landscape',
    colorScheme: pick('theme', request.theme, SCHEMES, 'light'),
  };
}

/** The cache key of a render: the kind, the normalised URL and every option, hashed. */
export function cacheKey(kind: 'screenshot' | 'pdf', url: URL, options: ScreenshotOptions | PdfOptions): string {
  const sorted = Object.fromEntries(Object.entries(options).sort(([a], [b]) => a.localeCompare(b)));
  return createHash('sha256')
    .update(JSON.stringify([kind, url.href, sorted]))
    .digest('base64url');
}
