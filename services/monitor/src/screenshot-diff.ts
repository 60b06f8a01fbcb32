/**
 * A screenshot run against the monitor's baseline: the share of pixels changed and an image
 * of the changes (pixelmatch's diff: changed pixels red over a faded copy of the page). Images of
 * different sizes are compared on the larger canvas; the area only one of them covers counts as
 * changed. Large captures are scaled down first so one comparison's memory stays bounded.
 */
import pixelmatch from 'pixelmatch';
import sharp from 'sharp';

/** Percent of pixels changed that alerts when a monitor names none (decision 0437). */
export const DEFAULT_CHANGE_THRESHOLD_PERCENT = 1;
/** Pixels compared at most (each image is held as 4 bytes a pixel, three times). */
export const MAX_COMPARED_PIXELS = 8_000_000;
/** pixelmatch's colour distance under which two pixels are the same (its default). */
const PIXEL_THRESHOLD = 0.1;

export interface ScreenshotDiff {
  kind: 'screenshot';
  /** Changed pixels over the compared canvas, in percent to three decimals. */
  changedPercent: number;
  thresholdPercent: number;
  width: number;
  height: number;
  /** True when the captures were scaled down to MAX_COMPARED_PIXELS before comparing. */
  scaled: boolean;
  sizeChanged: boolean;
  alert: boolean;
  lines: string[];
}

/**
 * RGBA pixels of an image scaled by `scale` and extended to width × height with `fill`
 * (the two images get different fills, so the area only one covers always differs).
 */
async function canvas(image: Buffer, scale: number, width: number, height: number, fill: string) {
  const { width: w = 1, height: h = 1 } = await sharp(image).metadata();
  const scaledWidth = Math.min(width, Math.max(1, Math.round(w * scale)));
  const scaledHeight = Math.min(height, Math.max(1, Math.round(h * scale)));
  let pipeline = sharp(image).removeAlpha().ensureAlpha();
  if (scaledWidth !== w || scaledHeight !== h) pipeline = pipeline.resize(scaledWidth, scaledHeight, { fit: 'fill' });
  return pipeline
    .extend({ right: width - scaledWidth, bottom: height - scaledHeight, background: fill })
    .raw()
    .toBuffer();
}

/** Compares a capture (PNG, JPEG or WebP) with the baseline capture. */
export async function diffScreenshots(
  baseline: Buffer,
  current: Buffer,
  thresholdPercent = DEFAULT_CHANGE_THRESHOLD_PERCENT,
  maxPixels = MAX_COMPARED_PIXELS,
): Promise<{ diff: ScreenshotDiff; diffPng: Buffer }> {
  const [before, after] = await Promise.all([sharp(baseline).metadata(), sharp(current).metadata()]);
  const fullWidth = Math.max(before.width ?? 1, after.width ?? 1);
  const fullHeight = Math.max(before.height ?? 1, after.height ?? 1);
  const scale = Math.min(1, Math.sqrt(maxPixels / (fullWidth * fullHeight)));
  const width = Math.max(1, Math.round(fullWidth * scale));
  const height = Math.max(1, Math.round(fullHeight * scale));
  const [a, b] = await Promise.all([
    canvas(baseline, scale, width, height, '#000000'),
    canvas(current, scale, width, height, '#ffffff'),
  ]);
  const output = Buffer.alloc(width * height * 4);
  const changed = pixelmatch(a, b, output, width, height, { threshold: PIXEL_THRESHOLD });
  const changedPercent = Math.round((changed / (width * height)) * 100_000) / 1000;
  const sizeChanged = before.width !== after.width || before.height !== after.height;
  const alert = changedPercent > thresholdPercent;
  const lines: string[] = [];
  if (alert) lines.push(`${changedPercent}% of the page changed (threshold ${thresholdPercent}%).`);
  if (sizeChanged)
    lines.push(`The capture is ${after.width}×${after.height} px, the baseline ${before.width}×${before.height} px.`);
  const diffPng = await sharp(output, { raw: { width, height, channels: 4 } })
    .png()
    .toBuffer();
  return {
    diff: {
      kind: 'screenshot',
      changedPercent,
      thresholdPercent,
      width,
      height,
      scaled: scale < 1,
      sizeChanged,
      alert,
      lines,
    },
    diffPng,
  };
}
