import { expect } from 'chai';
import { cacheKey, pdfOptions, screenshotOptions } from '../src/options.js';
import { PDF_STAGES, SCREENSHOT_STAGES, StageClock } from '../src/stage-clock.js';

describe('render options', () => {
  it('take the spec defaults when absent', () => {
    expect(screenshotOptions({})).to.deep.equal({ format: 'png', device: 'desktop', colorScheme: 'light' });
    expect(pdfOptions({})).to.deep.equal({
      device: 'desktop',
      pageFormat: 'a4',
      landscape: false,
      colorScheme: 'light',
    });
  });

  it('accept every allowed value', () => {
    for (const format of ['png', 'jpeg', 'webp']) expect(screenshotOptions({ format }).format).to.equal(format);
    for (const pageFormat of ['letter', 'legal', 'a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'a6']) {
      expect(pdfOptions({ pageFormat }).pageFormat).to.equal(pageFormat);
    }
    expect(screenshotOptions({ device: 'mobile', colorScheme: 'dark' })).to.include({
      device: 'mobile',
      colorScheme: 'dark',
    });
    expect(pdfOptions({ deviceType: 'mobile', orientation: 'landscape', theme: 'dark' })).to.include({
      device: 'mobile',
      landscape: true,
      colorScheme: 'dark',
    });
  });

  it('refuse any other value, naming the field and what it takes', () => {
    const cases: [() => unknown, RegExp][] = [
      [() => screenshotOptions({ format: 'gif' }), /^format must be one of png, jpeg, webp$/],
      [() => screenshotOptions({ format: 'PNG' }), /^format must be/],
      [() => screenshotOptions({ format: 'jpg' }), /^format must be/],
      [() => screenshotOptions({ format: '' }), /^format must be/],
      [() => screenshotOptions({ device: 'tablet' }), /^device must be one of desktop, mobile$/],
      [() => screenshotOptions({ colorScheme: 'sepia' }), /^colorScheme must be one of light, dark$/],
      [() => pdfOptions({ deviceType: 'watch' }), /^deviceType must be/],
      [() => pdfOptions({ pageFormat: 'tabloid' }), /^pageFormat must be one of letter, legal, a0/],
      [() => pdfOptions({ orientation: 'sideways' }), /^orientation must be one of portrait, landscape$/],
      [() => pdfOptions({ theme: 'blue' }), /^theme must be one of light, dark$/],
    ];
    for (const [make, message] of cases) {
      expect(make).to.throw(message).with.property('reason', 'INVALID_OPTION');
    }
  });

  it('key the cache on the kind, the URL and every option', () => {
    const url = new URL('https://example.com/a');
    const base = cacheKey('screenshot', url, screenshotOptions({}));
    expect(cacheKey('screenshot', new URL('https://example.com/a'), screenshotOptions({ format: 'png' }))).to.equal(
      base,
    );
    const variants = [
      cacheKey('screenshot', new URL('https://example.com/b'), screenshotOptions({})),
      cacheKey('screenshot', url, screenshotOptions({ format: 'webp' })),
      cacheKey('screenshot', url, screenshotOptions({ device: 'mobile' })),
      cacheKey('screenshot', url, screenshotOptions({ colorScheme: 'dark' })),
      cacheKey('pdf', url, pdfOptions({})),
      cacheKey('pdf', url, pdfOptions({ orientation: 'landscape' })),
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
