/**
 * One entry point for the core after each run: the operation's result against the previous
 * run's, by kind. A down-check's changes are its incidents (the scheduler's confirmation
 * thresholds), and a screenshot's is an image comparison (diffScreenshots), so neither is here.
 */
import { compareLinkCrawls, type LinkChanges, type LinkCrawlResult } from './link-changes.js';
import { compareMetaScans, type MetaChanges, type MetaScanResult } from './meta-changes.js';
import type { ScreenshotDiff } from './screenshot-diff.js';
import { compareSslScans, DEFAULT_EXPIRY_DAYS, type SslChanges, type SslScanResult } from './ssl-changes.js';

/** What a run found against the previous one, JSON-safe (a run's `changes_json`). */
export type RunChanges = SslChanges | MetaChanges | LinkChanges | ScreenshotDiff;

/** The alert rules the comparisons read (a monitor's `alerts`). */
export interface ComparisonRules {
  expiryDays?: readonly number[];
}

/**
 * The changes between two results of the operation `kind` (previous undefined: the first run);
 * undefined for the kinds compared elsewhere.
 */
export function compareResults(
  kind: string,
  previous: unknown,
  current: unknown,
  rules: ComparisonRules = {},
): RunChanges | undefined {
  switch (kind) {
    case 'ssl-scan':
      return compareSslScans(
        previous as SslScanResult | undefined,
        current as SslScanResult,
        rules.expiryDays?.length ? rules.expiryDays : DEFAULT_EXPIRY_DAYS,
      );
    case 'meta-scan':
      return compareMetaScans(previous as MetaScanResult | undefined, current as MetaScanResult);
    case 'broken-links-crawl':
      return compareLinkCrawls(previous as LinkCrawlResult | undefined, current as LinkCrawlResult);
    default:
      return undefined;
  }
}
