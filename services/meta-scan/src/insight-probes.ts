/**
 * The fetches the insights need besides the page and its site files: the canonical URL's status
 * and the share images (status, type, bytes, pixel size). Each goes through the kit's safe client,
 * bounded in time (the site files' budget) and bytes, and none throws: a failure is a finding.
 */
import { header, type SafeResponse } from '@webutil/kit';
import { imageSize } from 'image-size';
import type { SiteFileOptions } from './site-files.js';

/** Bytes of an image counted at most (above every platform's limit); only the first part is kept. */
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;
/** Bytes kept for reading the pixel size: formats put it in their header. */
const IMAGE_HEADER_BYTES = 512 * 1024;

export type StatusProbe = { status: number; location?: string } | { error: string };

/** The status a URL answers, redirects not followed (a redirecting canonical is a finding). */
export async function probeStatus(url: string, options: SiteFileOptions): Promise<StatusProbe> {
  let res: SafeResponse;
  try {
    res = await options.http.fetch(url, {
      timeoutMs: options.timeoutMs,
      maxRedirects: 0,
      maxBodyBytes: 0,
      signal: options.signal,
    });
  } catch (err) {
    if (options.signal.aborted) throw options.signal.reason;
    return { error: (err as Error).message };
  }
  await res.dump();
  return { status: res.status, location: header(res.headers, 'location') };
}

export type ImageProbe =
  | {
      url: string;
      status: number;
      contentType: string | undefined;
      /** Bytes read; at MAX_IMAGE_BYTES reading stopped (`tooLarge`). */
      bytes: number;
      tooLarge: boolean;
      width?: number;
      height?: number;
    }
  | { url: string; error: string };

/** An image fetched as a platform's crawler would: status, type, size in bytes and in pixels. */
export async function probeImage(url: string, options: SiteFileOptions): Promise<ImageProbe> {
  let res: SafeResponse;
  try {
    res = await options.http.fetch(url, {
      timeoutMs: options.timeoutMs,
      maxRedirects: 5,
      maxBodyBytes: MAX_IMAGE_BYTES,
      headers: { accept: 'image/*,*/*;q=0.8', ...options.headers },
      signal: options.signal,
    });
  } catch (err) {
    if (options.signal.aborted) throw options.signal.reason;
    return { url, error: (err as Error).message };
  }
  const contentType = header(res.headers, 'content-type')?.split(';')[0]?.trim().toLowerCase();
  if (res.status >= 300) {
    await res.dump();
    return { url, status: res.status, contentType, bytes: 0, tooLarge: false };
  }
  const kept: Buffer[] = [];
  let bytes = 0;
  let keptBytes = 0;
  try {
    for await (const chunk of res.body) {
      bytes += chunk.length;
      if (keptBytes < IMAGE_HEADER_BYTES) {
        const part = chunk.subarray(0, IMAGE_HEADER_BYTES - keptBytes);
        kept.push(part);
        keptBytes += part.length;
      }
    }
  } catch (err) {
    if (options.signal.aborted) throw options.signal.reason;
    return { url, error: (err as Error).message };
  }
  const found: ImageProbe = { url, status: res.status, contentType, bytes, tooLarge: res.truncated };
  try {
    const size = imageSize(Buffer.concat(kept));
    // An EXIF orientation of 5–8 turns the picture a quarter: what platforms show is the swap.
    const turned = (size.orientation ?? 1) >= 5;
    found.width = turned ? size.height : size.width;
    found.height = turned ? size.width : size.height;
  } catch {
    // Not an image image-size knows, or its header lies past what was kept: no dimensions.
  }
  return found;
}
