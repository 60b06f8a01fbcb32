import { createHash } from 'node:crypto';
import { invalidArgument } from '@webutil/kit';
import type {
  PageOptions,
  PdfMargin,
  ScreenshotRequest,
  UrlToPdfRequest,
} from '@webutil/proto/webutil/render/v1/render';
import * as contract from '@webutil/proto/webutil/render/v1/render.fields';
import type { PaperFormat } from 'puppeteer-core';
import type { DeviceName } from './devices.js';
import { templateHtml } from './print-templates.js';

/** An enum as proto/write-fields.mjs writes it: each value's name and number. */
type EnumFacts = { values: Readonly<Record<string, number>> };

/** A numeric field's bounds, as render.proto declares them. */
const range = ({ bounds }: { bounds: { min: number; max: number } }) => [bounds.min, bounds.max] as const;

/**
 * The optional options' bounds (docs/decisions/0191-render-options.md), declared once beside each
 * field in render.proto (decision 0313); the edge's input schemas take the same for REST callers,
 * these hold for every caller of the service.
 */
export const BOUNDS = {
  viewportWidth: range(contract.Viewport.fields.width),
  viewportHeight: range(contract.Viewport.fields.height),
  deviceScaleFactor: range(contract.ScreenshotRequest.fields.deviceScaleFactor),
  quality: range(contract.ScreenshotRequest.fields.quality),
  delayMs: range(contract.PageOptions.fields.delayMs),
  cacheTtlSeconds: range(contract.PageOptions.fields.cacheTtlSeconds),
  scale: range(contract.UrlToPdfRequest.fields.scale),
  marginMm: range(contract.PdfMargin.fields.top),
  hideSelectors: contract.PageOptions.fields.hideSelectors.bounds.maxItems,
  selectorChars: contract.ScreenshotRequest.fields.selector.bounds.maxChars,
  cssBytes: contract.PageOptions.fields.css.bounds.maxBytes,
  templateBytes: contract.UrlToPdfRequest.fields.headerTemplate.bounds.maxBytes,
  pageRangesChars: contract.UrlToPdfRequest.fields.pageRanges.bounds.maxChars,
} as const;

/** How the page is prepared before either render captures it; empty is the spec's behaviour. */
export interface PagePrep {
  hideSelectors: string[];
  css: string;
  waitForSelector: string | undefined;
  delayMs: number;
  blockAds: boolean;
  blockCookieBanners: boolean;
}

/** What a screenshot request asks for, defaults applied. */
export interface ScreenshotOptions {
  format: ImageFormat;
  device: DeviceName;
  colorScheme: ColorScheme;
  /** Overrides the device's size (CSS px). */
  viewport: { width: number; height: number } | undefined;
  /** Overrides the device's scale factor. */
  deviceScaleFactor: number | undefined;
  fullPage: boolean;
  selector: string | undefined;
  /** jpeg and webp only. */
  quality: number;
  prep: PagePrep;
}

/** What a PDF request asks for, defaults applied. */
export interface PdfOptions {
  device: DeviceName;
  pageFormat: PaperFormat;
  landscape: boolean;
  colorScheme: ColorScheme;
  /** Each side in mm; undefined sides keep Chromium's default (none, or room for a header or footer). */
  margin: { top?: string; right?: string; bottom?: string; left?: string };
  /** Sanitized header and footer templates; both undefined prints none (the spec's behaviour). */
  headerTemplate: string | undefined;
  footerTemplate: string | undefined;
  printBackground: boolean;
  scale: number;
  /** Pages printed, within the page cap. */
  pageRanges: string;
  mediaType: MediaType;
  preferCssPageSize: boolean;
  outline: boolean;
  prep: PagePrep;
}

/** The options' values are the proto enums' (render.proto): their REST names, in lower case. */
export type ImageFormat = keyof (typeof contract.ImageFormat)['values'];
export type ColorScheme = keyof (typeof contract.ColorScheme)['values'];
export type MediaType = keyof (typeof contract.MediaType)['values'];

/** Each image format's stored extension and content type. */
export const IMAGE_FORMATS: Record<ImageFormat, { extension: string; contentType: string }> = {
  png: { extension: 'png', contentType: 'image/png' },
  jpeg: { extension: 'jpg', contentType: 'image/jpeg' },
  webp: { extension: 'webp', contentType: 'image/webp' },
};

/** The spec's jpeg and webp quality. */
export const DEFAULT_QUALITY = 80;

const invalid = (message: string) => invalidArgument('INVALID_OPTION', message);

/**
 * One option: its enum value's name. The zero value is the spec's default, so an absent option is
 * already the default; a number the enum does not have is refused.
 */
function pick<E extends EnumFacts>(name: string, value: number, facts: E): keyof E['values'] & string {
  const found = Object.entries(facts.values).find(([, number]) => number === value);
  if (found) return found[0] as keyof E['values'] & string;
  throw invalid(`${name} must be one of ${Object.keys(facts.values).join(', ')}`);
}

/** A number within its bounds (an integer where the bounds are), or undefined when absent. */
function within(name: string, value: number | undefined, [min, max]: readonly [number, number], integer = true) {
  if (value === undefined) return undefined;
  if (!Number.isFinite(value) || (integer && !Number.isInteger(value)) || value < min || value > max) {
    throw invalid(`${name} must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}`);
  }
  return value;
}

/** A CSS selector of bounded length; whether it parses is the browser's to say (render-page). */
function selectorOf(name: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!value.trim() || value.length > BOUNDS.selectorChars) {
    throw invalid(`${name} must be a CSS selector of 1 to ${BOUNDS.selectorChars} characters`);
  }
  return value;
}

function pagePrep(page: PageOptions | undefined): PagePrep {
  const hideSelectors = page?.hideSelectors ?? [];
  if (hideSelectors.length > BOUNDS.hideSelectors) {
    throw invalid(`hideSelectors takes at most ${BOUNDS.hideSelectors} selectors`);
  }
  const css = page?.css ?? '';
  if (Buffer.byteLength(css) > BOUNDS.cssBytes) throw invalid(`css must be at most ${BOUNDS.cssBytes} bytes`);
  return {
    hideSelectors: hideSelectors.map((selector, i) => selectorOf(`hideSelectors[${i}]`, selector) as string),
    css,
    waitForSelector: selectorOf('waitForSelector', page?.waitForSelector),
    delayMs: within('delay', page?.delayMs, BOUNDS.delayMs) ?? 0,
    blockAds: page?.blockAds ?? false,
    blockCookieBanners: page?.blockCookieBanners ?? false,
  };
}

/** How old a cached identical result may be to answer, in ms; undefined: the service's window. */
export function cacheTtlMs(page: PageOptions | undefined): number | undefined {
  const seconds = within('cacheTtl', page?.cacheTtlSeconds, BOUNDS.cacheTtlSeconds);
  return seconds === undefined ? undefined : seconds * 1000;
}

export function screenshotOptions(request: Omit<ScreenshotRequest, 'url'>): ScreenshotOptions {
  const format = pick('format', request.format, contract.ImageFormat);
  if (request.quality !== undefined && format === 'png') {
    throw invalid('quality applies to jpeg and webp only');
  }
  const viewport = request.viewport && {
    width: within('viewport.width', request.viewport.width, BOUNDS.viewportWidth) as number,
    height: within('viewport.height', request.viewport.height, BOUNDS.viewportHeight) as number,
  };
  return {
    format,
    device: pick('device', request.device, contract.Device),
    colorScheme: pick('colorScheme', request.colorScheme, contract.ColorScheme),
    viewport,
    deviceScaleFactor: within('deviceScaleFactor', request.deviceScaleFactor, BOUNDS.deviceScaleFactor, false),
    fullPage: request.fullPage ?? true,
    selector: selectorOf('selector', request.selector),
    quality: within('quality', request.quality, BOUNDS.quality) ?? DEFAULT_QUALITY,
    prep: pagePrep(request.page),
  };
}

export function pdfOptions(request: Omit<UrlToPdfRequest, 'url'>, maxPages: number): PdfOptions {
  const header = pick('headerFooter.header', request.header, contract.HeaderPreset);
  const footer = pick('headerFooter.footer', request.footer, contract.FooterPreset);
  const headerTemplate = template('headerTemplate', request.headerTemplate) ?? presetHeader(header);
  const footerTemplate = template('footerTemplate', request.footerTemplate) ?? presetFooter(footer);
  return {
    device: pick('deviceType', request.deviceType, contract.Device),
    pageFormat: pick('pageFormat', request.pageFormat, contract.PageFormat),
    landscape: pick('orientation', request.orientation, contract.Orientation) === 'landscape',
    colorScheme: pick('theme', request.theme, contract.ColorScheme),
    margin: margins(request.margin),
    headerTemplate,
    footerTemplate,
    printBackground: request.printBackground ?? true,
    scale: within('scale', request.scale, BOUNDS.scale, false) ?? 1,
    pageRanges: pageRanges(request.pageRanges, maxPages),
    mediaType: pick('mediaType', request.mediaType, contract.MediaType),
    preferCssPageSize: request.preferCssPageSize,
    outline: request.outline,
    prep: pagePrep(request.page),
  };
}

const MM_PER_UNIT: Record<string, number> = { mm: 1, cm: 10, in: 25.4, px: 25.4 / 96 };

/** A CSS length of 0-50 mm in mm, cm, in or px (what Chromium's printing takes); "0" alone too. */
export function marginMm(name: string, value: string): number {
  const match = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*(mm|cm|in|px)?\s*$/i.exec(value);
  const unit = match?.[2]?.toLowerCase() ?? (Number(match?.[1]) === 0 ? 'mm' : undefined);
  const mm = match && unit ? Number(match[1]) * (MM_PER_UNIT[unit] as number) : Number.NaN;
  const [min, max] = BOUNDS.marginMm;
  if (!(mm >= min && mm <= max + 1e-9)) {
    throw invalid(`${name} must be a CSS length in mm, cm, in or px from ${min} to ${max} mm, e.g. "10mm"`);
  }
  return mm;
}

function margins(margin: PdfMargin | undefined): PdfOptions['margin'] {
  const sides = {} as PdfOptions['margin'];
  for (const side of ['top', 'right', 'bottom', 'left'] as const) {
    const value = margin?.[side];
    if (value) sides[side] = `${marginMm(`margin.${side}`, value)}mm`;
  }
  return sides;
}

/**
 * Page ranges as Chromium takes them ("1-3,5", "4-"), each page from 1, each range ascending;
 * ranges past the page cap are cut to it.
 */
export function pageRanges(value: string | undefined, maxPages: number): string {
  if (value === undefined) return `1-${maxPages}`;
  const bad = () =>
    invalid(`pageRanges must be pages and ranges from 1, separated by commas (e.g. "1-3,5"), up to page ${maxPages}`);
  if (value.length > BOUNDS.pageRangesChars) throw bad();
  const parts = value.split(',').map((part) => part.trim());
  const ranges = parts.map((part) => {
    const match = /^(\d{1,6})(?:\s*-\s*(\d{1,6})?)?$/.exec(part);
    if (!match) throw bad();
    const from = Number(match[1]);
    const to = match[2] === undefined ? (part.includes('-') ? maxPages : from) : Number(match[2]);
    if (from < 1 || to < from || from > maxPages) throw bad();
    return from === Math.min(to, maxPages) ? `${from}` : `${from}-${Math.min(to, maxPages)}`;
  });
  return ranges.join(',');
}

function template(name: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (Buffer.byteLength(value) > BOUNDS.templateBytes) throw invalid(`${name} must be at most 4 KB of HTML`);
  return templateHtml(value);
}

/**
 * The presets' templates: Chromium draws its own header and footer at a tiny default size, so each
 * preset sets a legible one; an empty span keeps Chromium from drawing its default on the other side.
 */
const PRESET_STYLE = 'font:10pt/1.4 sans-serif;color:#333;width:100%;padding:0 12mm;box-sizing:border-box';
const preset = (align: string, inner: string) => `<div style="${PRESET_STYLE};text-align:${align}">${inner}</div>`;
export const EMPTY_TEMPLATE = '<span></span>';

function presetHeader(header: keyof (typeof contract.HeaderPreset)['values']): string | undefined {
  const field = { none: undefined, title: 'title', url: 'url', date: 'date' }[header];
  return field && preset('left', `<span class="${field}"></span>`);
}

function presetFooter(footer: keyof (typeof contract.FooterPreset)['values']): string | undefined {
  if (footer === 'page_numbers') return preset('center', '<span class="pageNumber"></span>');
  if (footer === 'page_of_total') {
    return preset('center', '<span class="pageNumber"></span> of <span class="totalPages"></span>');
  }
  return undefined;
}

/**
 * The cache key of a render: the kind, the normalised URL and every option that changes the
 * result, hashed (the cache's own freshness, cacheTtl, is not one).
 */
export function cacheKey(kind: 'screenshot' | 'pdf', url: URL, options: ScreenshotOptions | PdfOptions): string {
  return createHash('sha256')
    .update(JSON.stringify([kind, url.href, sortedDeep(options)]))
    .digest('base64url');
}

/** Objects with their keys sorted at every level, undefined values dropped, so the key ignores order. */
function sortedDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedDeep);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => [k, sortedDeep(v)]),
  );
}
