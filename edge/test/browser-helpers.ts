/** What the website's browser tests share: Debian's Chromium, and axe-core's verdict on a page. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '@webutil/scripts/local-stack';
import type { AxeResults } from 'axe-core';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

// The page's global in the callbacks puppeteer runs there (the tests' program has no DOM types).
declare const window: any;

const AXE = readFileSync(path.join(REPO_ROOT, 'node_modules/axe-core/axe.min.js'), 'utf8');

/** Debian's Chromium, headless; no sandbox, as the tests run as root. */
export function launchChromium(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
}

/** axe-core's serious and critical violations on the page as it stands, each with the nodes it names. */
export async function seriousViolations(page: Page): Promise<string[]> {
  // Injected through CDP, not as a page <script>, so the CSP stays strict.
  if (!(await page.evaluate(() => !!window.axe))) await page.evaluate(AXE);
  return page.evaluate(async () => {
    const result: AxeResults = await window.axe.run();
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });
}
