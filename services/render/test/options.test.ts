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
const shot = (options: Partial<ScreenshotRequest> = {}) => ScreenshotRequest.fromPartial(options);
const pdf = (options: Partial<UrlToPdfRequest> = {}) => UrlToPdfRequest.fromPartial(options);

describe('render options', () => {
  it('take the spec defaults when absent', () => {
    expect(screenshotOptions(shot())).to.deep.equal({ format: 'png', device: 'desktop', colorScheme: 'light' });
    expect(pdfOptions(pdf())).to.deep.equal({
      device: 'desktop',
      pageFormat: 'a4',
      landscape: false,
      colorScheme: 'light',
    });
  });

  it('accept every value of the spec, in its order, from the proto enums', () => {
    const formats = [ImageFormat.IMAGE_FORMAT_PNG, ImageFormat.IMAGE_FORMAT_JPEG, ImageFormat.IMAGE_FORMAT_WEBP];
    expect(formats.map((format) => screenshotOptions(shot({ format })).format)).to.deep.equal(['png', 'jpeg', 'webp']);
    const pages = Object.values(contract.PageFormat.values).map((pageFormat) => pdfOptions(pdf({ pageFormat })));
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
    expect(pdfOptions(landscape)).to.include({ device: 'mobile', landscape: true, colorScheme: 'dark' });
  });

  it('refuse a number the enum does not have, naming the field and what it takes', () => {
    /** What a binary client may send: any number (ts-proto's types allow only the enum's). */
    const stray = 9 as never;
    const cases: [() => unknown, RegExp][] = [
      [() => screenshotOptions(shot({ format: stray })), /^format must be one of png, jpeg, webp$/],
      [() => screenshotOptions(shot({ format: ImageFormat.UNRECOGNIZED })), /^format must be/],
      [() => screenshotOptions(shot({ device: stray })), /^device must be one of desktop, mobile$/],
      [() => screenshotOptions(shot({ colorScheme: stray })), /^colorScheme must be one of light, dark$/],
      [() => pdfOptions(pdf({ deviceType: stray })), /^deviceType must be/],
      [() => pdfOptions(pdf({ pageFormat: stray })), /^pageFormat must be one of letter, legal, a0/],
      [() => pdfOptions(pdf({ orientation: stray })), /^orientation must be one of portrait, landscape$/],
      [() => pdfOptions(pdf({ theme: stray })), /^theme must be one of light, dark$/],
    ];
    for (const [make, message] of cases) {
      expect(make).to.throw(message).with.property('reason', 'INVALID_OPTION');
    }
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
      cacheKey('pdf', url, pdfOptions(pdf())),
      cacheKey('pdf', url, pdfOptions(pdf({ orientation: Orientation.ORIENTATION_LANDSCAPE }))),
    ];
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
