import type * as contract from '@webutil/proto/webutil/render/v1/render.fields';
import { KnownDevices, type Viewport } from 'puppeteer-core';

/** The Device enum's values (render.proto). */
export type DeviceName = keyof (typeof contract.Device)['values'];

export interface Device {
  viewport: Viewport;
  /** Undefined keeps Chromium's own desktop user agent (minus "Headless", see render-page). */
  userAgent?: string;
}

/**
 * The two emulated devices. Desktop: a common laptop viewport at scale 1. Mobile: puppeteer's
 * iPhone 15 Pro profile, a real device's viewport, scale factor 3, touch and mobile user agent,
 * so sites serve their phone layout.
 */
export const DEVICES: Record<DeviceName, Device> = {
  desktop: {
    viewport: { width: 1280, height: 800, deviceScaleFactor: 1, isMobile: false, hasTouch: false },
  },
  mobile: {
    viewport: { ...KnownDevices['iPhone 15 Pro'].viewport },
    userAgent: KnownDevices['iPhone 15 Pro'].userAgent,
  },
};
