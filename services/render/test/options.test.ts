import {
  ColorScheme,
  Device,
  ImageFormat,
  Orientation,
  ScreenshotRequest,
  UrlToPdfRequest,
} from '@webutil/proto/webutil/render/v1/render';
import * as contract from '@webutil/proto/webutil/render/v1/render.fields';
import { expect } from 'chai';
import { cacheKey, pdfOptions, screenshotOptions } from '../src/options.js';
import { PDF_STAGES, SCREENSHOT_STAGES, StageClock } from '../src/stage-clock.js';

/** A request as the wire brings it: every option absent unless given (then its enum's zero, the default). */
const shot = (options: Parameters<typeof ScreenshotRequest.fromPartial>[0] = {}) =>
  ScreenshotRequest.fromPartial(options);
const pdf = (options: Parameters<typeof UrlToPdfRequest.fromPartial>[0] = {}) => UrlToPdfRequest.fromPartial(options);

describe('render options', () => {
  it('take the spec defaults when absent', () => {
    const prep = { hideSelectors: [], css: '', delayMs: 0, blockAds: false, blockCookieBanners: false };
    expect(screenshotOptions(shot())).to.deep.equal({
      format: 'png',
      device: 'desktop',
      colorScheme: 'light',
      viewport: undefined,
      deviceScaleFactor: undefined,
      fullPage: true,
      selector: undefined,
      quality: 80,
      prep: { ...prep, waitForSelector: undefined },
    });
    expect(pdfOptions(pdf(), 100)).to.deep.equal({
      device: 'desktop',
      pageFormat: 'a4',
      landscape: false,
      colorScheme: 'light',
      margin: {},
      headerTemplate: undefined,
      footerTemplate: undefined,
      printBackground: true,
      scale: 1,
      pageRanges: '1-100',
      mediaType: 'screen',
      preferCssPageSize: false,
      outline: false,
      prep: { ...prep, waitForSelector: undefined },
    });
  });

  it('accept every value of the spec, in its order, from the proto enums', () => {
    const formats = [ImageFormat.IMAGE_FORMAT_PNG, ImageFormat.IMAGE_FORMAT_JPEG, ImageFormat.IMAGE_FORMAT_WEBP];
    expect(formats.map((format) => screenshotOptions(shot({ format })).format)).to.deep.equal(['png', 'jpeg', 'webp']);
    const pages = Object.values(contract.PageFormat.values).map((pageFormat) => pdfOptions(pdf({ pageFormat }), 100));
    expect(pages.map((o) => o.pageFormat)).to.deep.equal(['letter', 'legal', 'a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'a6']);
    expect(
      screenshotOptions(shot({ device: Device.DEVICE_MOBILE, colorScheme: ColorScheme.COLOR_SCHEME_DARK })),
    ).to.include({
      device: 'mobile',
      colorScheme: 'dark',
    });
    const landscape = pdf({
      deviceType: Device.DEVICE_MOBILE,
      orientation: Orientation.ORIENTATION_LANDSCAPE,
      theme: ColorScheme.COLOR_SCHEME_DARK,
    });
    expect(pdfOptions(landscape, 100)).to.include({ device: 'mobile', landscape: true, colorScheme: 'dark' });
  });

  it('refuse a number the enum does not have, naming the field and what it takes', () => {
    /** What a binary client may send: any number (ts-proto's types allow only the enum's). */
    const stray = 9 as never;
    const cases: [() => unknown, RegExp][] = [
      [() => screenshotOptions(shot({ format: stray })), /^format must be one of png, jpeg, webp$/],
      [() => screenshotOptions(shot({ format: ImageFormat.UNRECOGNIZED })), /^format must be/],
      [() => screenshotOptions(shot({ device: stray })), /^device must be one of desktop, mobile$/],
      [() => screenshotOptions(shot({ colorScheme: stray })), /^colorScheme must be one of light, dark$/],
      [() => pdfOptions(pdf({ deviceType: stray }), 100), /^deviceType must be/],
      [() => pdfOptions(pdf({ pageFormat: stray }), 100), /^pageFormat must be one of letter, legal, a0/],
      [() => pdfOptions(pdf({ orientation: stray }), 100), /^orientation must be one of portrait, landscape$/],
      [() => pdfOptions(pdf({ theme: stray }), 100), /^theme must be one of light, dark$/],
    ];
    for (const [make, message] of cases) {
      expect(make).to.throw(message).with.property('reason', 'INVALID_OPTION');
    }
  });

  it('bound the new options, naming the field', () => {
    const cases: [() => unknown, RegExp][] = [
      [() => screenshotOptions(shot({ viewport: { width: 100, height: 600 } })), /^viewport.width must be/],
      [() => screenshotOptions(shot({ deviceScaleFactor: 4 })), /^deviceScaleFactor must be/],
      [() => screenshotOptions(shot({ quality: 50 })), /^quality applies to jpeg and webp/],
      [() => screenshotOptions(shot({ page: { hideSelectors: Array(21).fill('p') } })), /^hideSelectors takes/],
      [() => screenshotOptions(shot({ page: { hideSelectors: [], delayMs: 10_001 } })), /^delay must be/],
      [() => pdfOptions(pdf({ margin: { top: '2in', right: '', bottom: '', left: '' } }), 100), /^margin.top/],
      [() => pdfOptions(pdf({ scale: 3 }), 100), /^scale must be/],
      [() => pdfOptions(pdf({ pageRanges: '3-1' }), 100), /^pageRanges must be/],
      [() => pdfOptions(pdf({ pageRanges: '101' }), 100), /^pageRanges must be/],
      [() => pdfOptions(pdf({ headerTemplate: 'x'.repeat(4097) }), 100), /^headerTemplate must be/],
    ];
    for (const [make, message] of cases) {
      expect(make).to.throw(message).with.property('reason', 'INVALID_OPTION');
    }
  });

  it('hold the bounds render.proto declares: each bound passes, one step past it is refused (decision 0313)', () => {
    const page = contract.PageOptions.fields;
    const screenshot = contract.ScreenshotRequest.fields;
    const viewport = contract.Viewport.fields;
    const jpeg = ImageFormat.IMAGE_FORMAT_JPEG;
    const cases: [string, { min: number; max: number }, number, (value: number) => unknown][] = [
      ['delay', page.delayMs.bounds, 1, (delayMs) => screenshotOptions(shot({ page: { hideSelectors: [], delayMs } }))],
      ['quality', screenshot.quality.bounds, 1, (quality) => screenshotOptions(shot({ format: jpeg, quality }))],
      [
        'deviceScaleFactor',
        screenshot.deviceScaleFactor.bounds,
        0.01,
        (deviceScaleFactor) => screenshotOptions(shot({ deviceScaleFactor })),
      ],
      [
        'viewport.width',
        viewport.width.bounds,
        1,
        (width) => screenshotOptions(shot({ viewport: { width, height: 600 } })),
      ],
      ['scale', contract.UrlToPdfRequest.fields.scale.bounds, 0.01, (scale) => pdfOptions(pdf({ scale }), 100)],
    ];
    for (const [name, { min, max }, step, make] of cases) {
      for (const fine of [min, max]) expect(() => make(fine), `${name} ${fine}`).to.not.throw();
      for (const past of [min - step, max + step]) {
        expect(() => make(past), `${name} ${past}`).to.throw(new RegExp(`^${name} must be`));
      }
    }
  });

  it('convert margins to mm and cut page ranges to the page cap', () => {
    const margin = { top: '10mm', right: '0.5in', bottom: '2cm', left: '96px' };
    expect(pdfOptions(pdf({ margin }), 100).margin).to.deep.equal({
      top: '10mm',
      right: '12.7mm',
      bottom: '20mm',
      left: '25.4mm',
    });
    expect(pdfOptions(pdf({ pageRanges: ' 1-3, 5 ,7-' }), 10).pageRanges).to.equal('1-3,5,7-10');
    expect(pdfOptions(pdf({ pageRanges: '2-500' }), 10).pageRanges).to.equal('2-10');
  });

  it('sanitize templates: scripts, images, links and style URLs go, the page number classes stay', () => {
    const html =
      '<div style="font-size:9pt;background:url(http://x/a.png)" onclick="x()">A <span class="pageNumber"></span>' +
      '<img src="http://x/t.png"><script>alert(1)</script><a href="http://x/">link</a>' +
      '<link rel="stylesheet" href="http://x/s.css"><style>@import "http://x/i.css";</style></div>';
    const { footerTemplate } = pdfOptions(pdf({ footerTemplate: html }), 100);
    expect(footerTemplate).to.equal('<div style="font-size:9pt">A <span class="pageNumber"></span>link</div>');
    expect(pdfOptions(pdf({ footer: 2 }), 100).footerTemplate).to.contain('class="totalPages"');
  });

  it('key the cache on the kind, the URL and every option', () => {
    const url = new URL('https://example.com/a');
    const base = cacheKey('screenshot', url, screenshotOptions(shot()));
    const png = screenshotOptions(shot({ format: ImageFormat.IMAGE_FORMAT_PNG }));
    expect(cacheKey('screenshot', new URL('https://example.com/a'), png)).to.equal(base);
    const variants = [
      cacheKey('screenshot', new URL('https://example.com/b'), screenshotOptions(shot())),
      cacheKey('screenshot', url, screenshotOptions(shot({ format: ImageFormat.IMAGE_FORMAT_WEBP }))),
      cacheKey('screenshot', url, screenshotOptions(shot({ device: Device.DEVICE_MOBILE }))),
      cacheKey('screenshot', url, screenshotOptions(shot({ colorScheme: ColorScheme.COLOR_SCHEME_DARK }))),
      cacheKey('pdf', url, pdfOptions(pdf(), 100)),
      cacheKey('pdf', url, pdfOptions(pdf({ orientation: Orientation.ORIENTATION_LANDSCAPE }), 100)),
      cacheKey('screenshot', url, screenshotOptions(shot({ page: { hideSelectors: ['p'] } }))),
      cacheKey('screenshot', url, screenshotOptions(shot({ fullPage: false }))),
      cacheKey('pdf', url, pdfOptions(pdf({ page: { hideSelectors: [], blockAds: true } }), 100)),
      cacheKey('pdf', url, pdfOptions(pdf({ margin: { top: '1mm', right: '', bottom: '', left: '' } }), 100)),
    ];
    // The cache's own freshness is not an option of the result.
    const ttl = screenshotOptions(shot({ page: { hideSelectors: [], cacheTtlSeconds: 0 } }));
    expect(cacheKey('screenshot', url, ttl)).to.equal(base);
    expect(new Set([base, ...variants]).size).to.equal(variants.length + 1);
  });
});

describe('stage clock', () => {
  it('charges each stage the time since the previous one, and lists skipped stages as 0', () => {
    let now = 1000;
    const clock = new StageClock(() => now);
    now += 5;
    clock.end('queue');
    now += 20;
    clock.end('page');
    now += 100;
    clock.end('encode');
    const timings = Object.fromEntries(clock.timings(SCREENSHOT_STAGES).map((t) => [t.stage, t.durationMs]));
    expect(timings).to.deep.equal({
      queue: 5,
      page: 20,
      nav: 0,
      net: 0,
      scroll: 0,
      settle: 0,
      encode: 100,
      total: 125,
    });
    expect(clock.timings(PDF_STAGES).map((t) => t.stage)).to.deep.equal([...PDF_STAGES, 'total']);
  });
});
