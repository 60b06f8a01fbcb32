/** Screenshots and PDFs: the spec's render options and results (top-level envelope). */
import type {
  FooterPreset,
  HeaderPreset,
  PageOptions,
  ScreenshotRequest,
  UrlToPdfRequest,
} from '@webutil/proto/webutil/render/v1/render';
import * as render from '@webutil/proto/webutil/render/v1/render.fields';
import { z } from 'zod';
import { count, targetUrl } from '../../rest/common.js';
import { type EnumFacts, enumNumber, restEnum, restObject } from '../../rest/from-proto.js';

/**
 * An optional option, one of its proto enum's values; absent, the service applies the spec's
 * default (the enum's zero value), which the contract states (`default`) so clients and the
 * playground's forms preselect it.
 */
const option = <E extends EnumFacts & { default: string }>(name: string, facts: E) =>
  restEnum(facts, { error: `${name} must be one of ${Object.keys(facts.values).join(', ')}` })
    .optional()
    .meta({ default: facts.default, description: `Default ${facts.default}.` });

/** A request field's bounds as render.proto declares them (decision 0313). */
type Range = { bounds: { min: number; max: number } };
type Chars = { bounds: { maxChars: number } };

/** An optional integer within its proto bounds, its message naming the field. */
const int = (name: string, { bounds: { min, max } }: Range, description: string) =>
  z
    .number({ error: `${name} must be an integer from ${min} to ${max}` })
    .int({ error: `${name} must be an integer from ${min} to ${max}` })
    .min(min, { error: `${name} must be an integer from ${min} to ${max}` })
    .max(max, { error: `${name} must be an integer from ${min} to ${max}` })
    .meta({ description });

const num = (name: string, { bounds: { min, max } }: Range, description: string) =>
  z
    .number({ error: `${name} must be a number from ${min} to ${max}` })
    .min(min, { error: `${name} must be a number from ${min} to ${max}` })
    .max(max, { error: `${name} must be a number from ${min} to ${max}` })
    .meta({ description });

const bool = (name: string, description: string) =>
  z.boolean({ error: `${name} must be true or false` }).meta({ description });

/** A string of at most its proto bound's UTF-8 bytes. */
const text = (name: string, { bounds: { maxBytes } }: { bounds: { maxBytes: number } }, description: string) =>
  z
    .string({ error: `${name} must be a string` })
    .refine((value) => Buffer.byteLength(value) <= maxBytes, `${name} must be at most ${maxBytes} bytes`)
    .meta({ description, maxLength: maxBytes });

/** A CSS selector; whether it parses is the browser's to say (400 invalid_selector). */
const selector = (name: string, { bounds: { maxChars } }: Chars, description: string) =>
  z
    .string({ error: `${name} must be a CSS selector` })
    .trim()
    .min(1, `${name} must be a CSS selector`)
    .max(maxChars, `${name} must be at most ${maxChars} characters`)
    .meta({ description });

/** An enum whose REST values are its proto names with hyphens (page_numbers is page-numbers). */
const hyphenated = (name: string, facts: EnumFacts & { default: string }) => {
  const names = Object.keys(facts.values).map((value) => value.replaceAll('_', '-'));
  return z
    .enum(names as [string, ...string[]], { error: `${name} must be one of ${names.join(', ')}` })
    .optional()
    .meta({ default: facts.default, description: `Default ${facts.default}.` });
};
/** The proto number of a hyphenated value; the zero value (none) when absent. */
const hyphenatedNumber = (facts: EnumFacts, value: string | undefined) =>
  value === undefined ? 0 : (facts.values[value.replaceAll('-', '_')] ?? 0);

const MM_PER_UNIT: Record<string, number> = { mm: 1, cm: 10, in: 25.4, px: 25.4 / 96 };
const MARGIN_MM = render.PdfMargin.fields.top.bounds;
const MARGIN_RANGE = `${MARGIN_MM.min}-${MARGIN_MM.max} mm`;
/** A CSS length within the proto's bounds, in mm. */
const marginSide = (side: keyof typeof render.PdfMargin.fields) => {
  const { min, max } = render.PdfMargin.fields[side].bounds;
  const error = `margin.${side} must be a CSS length in mm, cm, in or px from ${min} to ${max} mm, e.g. "10mm"`;
  return z
    .string({ error })
    .refine((value) => {
      const match = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*(mm|cm|in|px)?\s*$/i.exec(value);
      const unit = match?.[2]?.toLowerCase() ?? (Number(match?.[1]) === 0 ? 'mm' : undefined);
      const mm = match && unit ? Number(match[1]) * (MM_PER_UNIT[unit] as number) : Number.NaN;
      return mm >= min && mm <= max + 1e-9;
    }, error)
    .optional()
    .meta({ description: `A CSS length of ${min}-${max} mm.`, example: '10mm' });
};

const page = render.PageOptions.fields;
const HIDDEN = page.hideSelectors.bounds.maxItems;

/** Page preparation both renders take (render.proto's PageOptions). */
const pageFields = {
  hideSelectors: z
    .array(selector('hideSelectors[]', page.hideSelectors, 'A CSS selector.'), {
      error: 'hideSelectors must be an array of CSS selectors',
    })
    .max(HIDDEN, `hideSelectors takes at most ${HIDDEN} selectors`)
    .optional()
    .meta({ description: `Up to ${HIDDEN} CSS selectors whose elements are hidden (display: none) before capture.` }),
  css: text(
    'css',
    page.css,
    `Up to ${page.css.bounds.maxBytes / 1024} KB of CSS added to the page before capture (no JavaScript).`,
  ).optional(),
  waitForSelector: selector(
    'waitForSelector',
    page.waitForSelector,
    'Capture waits until an element matches this CSS selector (at most 10 s, else 400 selector_not_found).',
  ).optional(),
  delay: int(
    'delay',
    page.delayMs,
    'Milliseconds waited after the page settles, before capture. Default 0.',
  ).optional(),
  blockAds: bool('blockAds', 'Block ad and tracker requests with the bundled filter lists. Default false.').optional(),
  blockCookieBanners: bool(
    'blockCookieBanners',
    'Block and hide cookie-consent banners with the bundled filter lists. Default false.',
  ).optional(),
  cacheTtl: int(
    'cacheTtl',
    page.cacheTtlSeconds,
    'Seconds an identical earlier result may be old and still answer (0: render afresh). Default 60; at most ' +
      'the file lifetime less a minute (about 4 minutes) is honoured, so a hit leaves time to download it.',
  ).optional(),
};

const viewport = render.Viewport.fields;
const screenshot = render.ScreenshotRequest.fields;

export const ScreenshotInput = z
  .object({
    url: targetUrl,
    format: option('format', render.ImageFormat),
    device: option('device', render.Device),
    colorScheme: option('colorScheme', render.ColorScheme),
    viewport: z
      .strictObject(
        {
          width: int('viewport.width', viewport.width, 'CSS pixels.'),
          height: int('viewport.height', viewport.height, 'CSS pixels.'),
        },
        {
          error:
            `viewport must be an object with width (${viewport.width.bounds.min}-${viewport.width.bounds.max}) ` +
            `and height (${viewport.height.bounds.min}-${viewport.height.bounds.max})`,
        },
      )
      .optional()
      .meta({ description: "Overrides the device's viewport size; the device keeps its user agent and touch." }),
    deviceScaleFactor: num(
      'deviceScaleFactor',
      screenshot.deviceScaleFactor,
      "Overrides the device's scale factor.",
    ).optional(),
    fullPage: bool('fullPage', 'false captures the viewport only. Default true.').optional(),
    selector: selector(
      'selector',
      screenshot.selector,
      'Capture only the first element matching this CSS selector (400 selector_not_found if none); ' +
        'like every capture, clipped past 3840 CSS px wide, 16,000 device px tall or 80 M device px.',
    ).optional(),
    quality: int('quality', screenshot.quality, 'jpeg and webp quality. Default 80.').optional(),
    ...pageFields,
  })
  .refine((input) => input.quality === undefined || (input.format ?? 'png') !== 'png', {
    error: 'quality applies to jpeg and webp only',
    path: ['quality'],
  });

const pdf = render.UrlToPdfRequest.fields;

export const PdfInput = z.object({
  url: targetUrl,
  deviceType: option('deviceType', render.Device),
  pageFormat: option('pageFormat', render.PageFormat),
  orientation: option('orientation', render.Orientation),
  theme: option('theme', render.ColorScheme),
  margin: z
    .strictObject(
      { top: marginSide('top'), right: marginSide('right'), bottom: marginSide('bottom'), left: marginSide('left') },
      { error: 'margin must be an object of top, right, bottom and left CSS lengths' },
    )
    .optional()
    .meta({ description: `Page margins as CSS lengths (mm, cm, in, px), each ${MARGIN_RANGE}. Default none.` }),
  headerFooter: z
    .strictObject(
      {
        header: hyphenated('headerFooter.header', render.HeaderPreset),
        footer: hyphenated('headerFooter.footer', render.FooterPreset),
      },
      { error: 'headerFooter must be an object with header and footer presets' },
    )
    .optional()
    .meta({ description: 'A legible header and footer drawn without HTML; the templates replace them.' }),
  headerTemplate: text(
    'headerTemplate',
    pdf.headerTemplate,
    `Chromium's header template: up to ${pdf.headerTemplate.bounds.maxBytes / 1024} KB of HTML ` +
      'with the classes pageNumber, totalPages, title, url and date; scripts, images, links and style URLs ' +
      'are removed.',
  ).optional(),
  footerTemplate: text('footerTemplate', pdf.footerTemplate, 'As headerTemplate, for the footer.').optional(),
  printBackground: bool('printBackground', 'Default true.').optional(),
  scale: num('scale', pdf.scale, 'Default 1.').optional(),
  pageRanges: z
    .string({ error: 'pageRanges must be a string such as "1-3,5"' })
    .max(pdf.pageRanges.bounds.maxChars, `pageRanges must be at most ${pdf.pageRanges.bounds.maxChars} characters`)
    .regex(/^\s*\d+(\s*-\s*\d*)?(\s*,\s*\d+(\s*-\s*\d*)?)*\s*$/, 'pageRanges must be pages and ranges such as "1-3,5"')
    .optional()
    .meta({ description: 'Pages printed, e.g. "1-3,5" or "2-"; default all (up to 100).' }),
  mediaType: option('mediaType', render.MediaType),
  preferCssPageSize: bool(
    'preferCssPageSize',
    "The page's own @page size wins over pageFormat. Default false.",
  ).optional(),
  outline: bool('outline', "A document outline from the page's headings. Default false.").optional(),
  ...pageFields,
});

type PageInput = { [K in keyof typeof pageFields]?: z.output<(typeof pageFields)[K]> };

/** The page preparation as the render service takes it; absent when nothing was asked. */
const pageOptions = (input: PageInput): PageOptions => ({
  hideSelectors: input.hideSelectors ?? [],
  css: input.css,
  waitForSelector: input.waitForSelector,
  delayMs: input.delay,
  cacheTtlSeconds: input.cacheTtl,
  blockAds: input.blockAds ?? false,
  blockCookieBanners: input.blockCookieBanners ?? false,
});

/** The options as the render service takes them: each its enum's number, the default's (zero) when absent. */
export const screenshotRequest = (input: z.output<typeof ScreenshotInput>): ScreenshotRequest => ({
  url: input.url,
  format: enumNumber(render.ImageFormat, input.format ?? render.ImageFormat.default),
  device: enumNumber(render.Device, input.device ?? render.Device.default),
  colorScheme: enumNumber(render.ColorScheme, input.colorScheme ?? render.ColorScheme.default),
  page: pageOptions(input),
  viewport: input.viewport,
  deviceScaleFactor: input.deviceScaleFactor,
  fullPage: input.fullPage,
  selector: input.selector,
  quality: input.quality,
});

export const pdfRequest = (input: z.output<typeof PdfInput>): UrlToPdfRequest => ({
  url: input.url,
  deviceType: enumNumber(render.Device, input.deviceType ?? render.Device.default),
  pageFormat: enumNumber(render.PageFormat, input.pageFormat ?? render.PageFormat.default),
  orientation: enumNumber(render.Orientation, input.orientation ?? render.Orientation.default),
  theme: enumNumber(render.ColorScheme, input.theme ?? render.ColorScheme.default),
  page: pageOptions(input),
  margin: input.margin && {
    top: input.margin.top ?? '',
    right: input.margin.right ?? '',
    bottom: input.margin.bottom ?? '',
    left: input.margin.left ?? '',
  },
  header: hyphenatedNumber(render.HeaderPreset, input.headerFooter?.header) as HeaderPreset,
  footer: hyphenatedNumber(render.FooterPreset, input.headerFooter?.footer) as FooterPreset,
  headerTemplate: input.headerTemplate,
  footerTemplate: input.footerTemplate,
  printBackground: input.printBackground,
  scale: input.scale,
  pageRanges: input.pageRanges,
  mediaType: enumNumber(render.MediaType, input.mediaType ?? render.MediaType.default),
  preferCssPageSize: input.preferCssPageSize ?? false,
  outline: input.outline ?? false,
});

const filename = { description: 'Download it from /api/uploads/<filename> for about 5 minutes.' };
const sizeBytes = { value: count };
const durationMs = { value: count, description: 'Total server-side time.' };
/** The cache flag and the stage timings are the route's response headers (presenters.ts). */
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
    clipped: {
      description:
        'The capture was cut to its bounds: taller than 16,000 device pixels, wider than 3840 CSS px, ' +
        'or larger than 80 M device pixels.',
    },
    durationMs,
  },
  omit: headers,
});

export const PdfResult = restObject(render.UrlToPdfResponse, {
  id: 'PdfResult',
  fields: { filename, sizeBytes, durationMs },
  omit: headers,
});
