/** Screenshots and PDFs: the spec's render options and results (top-level envelope). */
import { z } from 'zod';
import { count, targetUrl } from './common.js';

/**
 * An optional option from the spec's allowed values; absent, the service applies the spec's default,
 * which the contract states (`default`) so clients and the playground's forms preselect it.
 */
const oneOf = <const T extends readonly [string, ...string[]]>(name: string, values: T, fallback: T[number]) =>
  z
    .enum(values, { error: `${name} must be one of ${values.join(', ')}` })
    .optional()
    .meta({ default: fallback, description: `Default ${fallback}.` });

export const ScreenshotInput = z.object({
  url: targetUrl,
  format: oneOf('format', ['png', 'jpeg', 'webp'], 'png'),
  device: oneOf('device', ['desktop', 'mobile'], 'desktop'),
  colorScheme: oneOf('colorScheme', ['light', 'dark'], 'light'),
});

export const PdfInput = z.object({
  url: targetUrl,
  deviceType: oneOf('deviceType', ['desktop', 'mobile'], 'desktop'),
  pageFormat: oneOf('pageFormat', ['letter', 'legal', 'a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'a6'], 'a4'),
  orientation: oneOf('orientation', ['portrait', 'landscape'], 'portrait'),
  theme: oneOf('theme', ['light', 'dark'], 'light'),
});

const filename = z.string().meta({ description: 'Download it from /api/uploads/<filename> for about 5 minutes.' });
const durationMs = count.meta({ description: 'Total server-side time.' });

export const ScreenshotResult = z
  .strictObject({
    filename,
    sizeBytes: count,
    format: z.enum(['png', 'jpeg', 'webp']),
    fileExtension: z.enum(['png', 'jpg', 'webp']),
    clipped: z.boolean().meta({ description: 'The page was taller than the capture cap (16,000 device pixels).' }),
    durationMs,
  })
  .meta({ id: 'ScreenshotResult' });

export const PdfResult = z.strictObject({ filename, sizeBytes: count, durationMs }).meta({ id: 'PdfResult' });
