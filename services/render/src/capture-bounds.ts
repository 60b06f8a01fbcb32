/** A screenshot's area of the page, in CSS px (page coordinates). */
export interface Clip {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** How large a screenshot may be (docs/decisions/0291-capture-bounds.md). */
export interface CaptureBounds {
  /** Widest capture in CSS px: the widest viewport, so no capture is wider than a viewport capture. */
  maxWidthCss: number;
  /** Tallest capture in device pixels. */
  maxHeightPx: number;
  /** Largest capture in device pixels (width × height): what Chromium's bitmap and the encoder hold. */
  maxAreaPx: number;
}

/**
 * The area to capture, bounded in device pixels (CSS px × scale): its width to the widest
 * viewport, its height to maxHeightPx, then its height again until width × height fits
 * maxAreaPx. `clipped` says whether any bound cut it (from the right or the bottom; the
 * top-left corner stays where the caller's page or element put it).
 */
export function boundCapture(want: Clip, scale: number, bounds: CaptureBounds): { clip: Clip; clipped: boolean } {
  const width = Math.max(1, Math.min(want.width, bounds.maxWidthCss));
  const tallest = Math.floor(Math.min(bounds.maxHeightPx, bounds.maxAreaPx / (width * scale)) / scale);
  const height = Math.max(1, Math.min(want.height, tallest));
  return { clip: { ...want, width, height }, clipped: width < want.width || height < want.height };
}
