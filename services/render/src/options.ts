import { createHash } from 'node:crypto';
import { invalidArgument } from '@webutil/kit';
import type { ScreenshotRequest, UrlToPdfRequest } from '@webutil/proto/webutil/render/v1/render';
import * as contract from '@webutil/proto/webutil/render/v1/render.fields';
import type { PaperFormat } from 'puppeteer-core';
import type { DeviceName } from './devices.js';

/** An enum as proto/write-fields.mjs writes it: each value's name and number. */
type EnumFacts = { values: Readonly<Record<string, number>> };

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

/** The options' values are the proto enums' (render.proto): their REST names, in lower case. */
export type ImageFormat = keyof (typeof contract.ImageFormat)['values'];
export type ColorScheme = keyof (typeof contract.ColorScheme)['values'];

/** Each image format's stored extension and content type. */
export const IMAGE_FORMATS: Record<ImageFormat, { extension: string; contentType: string }> = {
  png: { extension: 'png', contentType: 'image/png' },
  jpeg: { extension: 'jpg', contentType: 'image/jpeg' },
  webp: { extension: 'webp', contentType: 'image/webp' },
};

/**
 * One option: its enum value's name. The zero value is the spec's default, so an absent option is
 * already the default; a number the enum does not have is refused.
 */
function pick<E extends EnumFacts>(name: string, value: number, facts: E): keyof E['values'] & string {
  const found = Object.entries(facts.values).find(([, number]) => number === value);
  if (found) return found[0] as keyof E['values'] & string;
  throw invalidArgument('INVALID_OPTION', `${name} must be one of ${Object.keys(facts.values).join(', ')}`);
}

export function screenshotOptions(request: Omit<ScreenshotRequest, 'url'>): ScreenshotOptions {
  return {
    format: pick('format', request.format, contract.ImageFormat),
    device: pick('device', request.device, contract.Device),
    colorScheme: pick('colorScheme', request.colorScheme, contract.ColorScheme),
  };
}

export function pdfOptions(request: Omit<UrlToPdfRequest, 'url'>): PdfOptions {
  return {
    device: pick('deviceType', request.deviceType, contract.Device),
    pageFormat: pick('pageFormat', request.pageFormat, contract.PageFormat),
    landscape: pick('orientation', request.orientation, contract.Orientation) === 'landscape',
    colorScheme: pick('theme', request.theme, contract.ColorScheme),
  };
}

/** The cache key of a render: the kind, the normalised URL and every option, hashed. */
export function cacheKey(kind: 'screenshot' | 'pdf', url: URL, options: ScreenshotOptions | PdfOptions): string {
  const sorted = Object.fromEntries(Object.entries(options).sort(([a], [b]) => a.localeCompare(b)));
  return createHash('sha256')
    .update(JSON.stringify([kind, url.href, sorted]))
    .digest('base64url');
}
