import { expect } from 'chai';
import sharp from 'sharp';
import { diffScreenshots } from '../src/screenshot-diff.js';

interface Box {
  left: number;
  top: number;
  width: number;
  height: number;
}

/** A white page of width × height with solid dark boxes drawn on it, encoded as `format`. */
async function page(width: number, height: number, boxes: Box[], format: 'png' | 'webp' = 'png') {
  const box = (b: Box) =>
    sharp({ create: { width: b.width, height: b.height, channels: 3, background: '#203040' } })
      .png()
      .toBuffer()
      .then((input) => ({ input, left: b.left, top: b.top }));
  const image = sharp({ create: { width, height, channels: 3, background: '#ffffff' } }).composite(
    await Promise.all(boxes.map(box)),
  );
  return format === 'png' ? image.png().toBuffer() : image.webp({ lossless: true }).toBuffer();
}

const area = (boxes: Box[]) => boxes.reduce((sum, b) => sum + b.width * b.height, 0);
const percent = (pixels: number, of: number) => Math.round((pixels / of) * 100_000) / 1000;

describe('diffScreenshots', () => {
  const header: Box = { left: 10, top: 10, width: 300, height: 40 };
  const banner: Box = { left: 50, top: 120, width: 80, height: 30 };

  it('measures the share of pixels changed and alerts over the threshold', async () => {
    const baseline = await page(400, 300, [header]);
    const current = await page(400, 300, [header, banner], 'webp');
    const { diff, diffPng } = await diffScreenshots(baseline, current, 1);
    expect(diff.changedPercent).to.equal(percent(area([banner]), 400 * 300));
    expect(diff).to.include({
      alert: diff.changedPercent > 1,
      width: 400,
      height: 300,
      sizeChanged: false,
      scaled: false,
    });
    expect(diff.alert).to.equal(true);
    const image = sharp(diffPng);
    expect(await image.metadata()).to.include({ format: 'png', width: 400, height: 300 });
    // The diff image marks exactly the banner's pixels in pixelmatch's red.
    const { data } = await image.raw().toBuffer({ resolveWithObject: true });
    let red = 0;
    for (let i = 0; i < data.length; i += 4) if (data[i] === 255 && data[i + 1] === 0 && data[i + 2] === 0) red++;
    expect(red).to.equal(area([banner]));
  });

  it('a change under the threshold is measured without an alert; the same page is 0 %', async () => {
    const baseline = await page(400, 300, [header]);
    const small = await diffScreenshots(baseline, await page(400, 300, [header, banner]), 5);
    expect(small.diff.changedPercent).to.equal(percent(area([banner]), 400 * 300));
    expect(small.diff.alert).to.equal(false);
    expect(small.diff.lines).to.deep.equal([]);
    const same = await diffScreenshots(baseline, baseline);
    expect(same.diff.changedPercent).to.equal(0);
  });

  it('a page that grew counts its new area as changed', async () => {
    const baseline = await page(400, 300, [header]);
    const taller = await diffScreenshots(baseline, await page(400, 400, [header]));
    expect(taller.diff).to.include({ width: 400, height: 400, sizeChanged: true });
    expect(taller.diff.changedPercent).to.equal(percent(400 * 100, 400 * 400));
    expect(taller.diff.lines.join(' ')).to.include('400×400 px').and.include('400×300 px');
  });

  it('scales large captures down to the pixel bound, keeping the share', async () => {
    const big: Box = { left: 0, top: 0, width: 1000, height: 500 };
    const baseline = await page(2000, 2000, []);
    const { diff } = await diffScreenshots(baseline, await page(2000, 2000, [big]), 1, 250_000);
    expect(diff).to.include({ width: 500, height: 500, scaled: true });
    expect(diff.changedPercent).to.be.closeTo(percent(area([big]), 2000 * 2000), 0.5);
  });
});
