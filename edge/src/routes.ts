/**
 * Every public route, as an index of the areas' tables (edge/src/areas/<area>/routes.ts: method, path,
 * operation, credits, request and response schemas, the one RPC it calls, and the failures it
 * answers). Each route is served under both /v1 and /api/v1; the OpenAPI document (openapi.ts) is
 * generated from this list, in its order. docs/architecture.md says how to add a row or an area.
 */
import { accountMailRoutes } from './areas/account-mail/routes.js';
import { accountRoutes, paymentRoutes, sessionRoutes } from './areas/billing/routes.js';
import { bookmarkDownloads, bookmarkRoutes } from './areas/bookmark/routes.js';
import { bookmarkCheckDownloads, bookmarkCheckRoutes } from './areas/bookmark-check/routes.js';
import { crawlRoutes, linkExtractRoutes } from './areas/crawl/routes.js';
import { metaScanRoutes } from './areas/meta-scan/routes.js';
import { monitorImageDownloads, monitorRoutes } from './areas/monitors/routes.js';
import { monitorStatusDownloads, monitorStatusRoutes } from './areas/monitors/status-routes.js';
import { renderDownloads, renderRoutes } from './areas/render/routes.js';
import { siteAuditImageDownloads, siteAuditRoutes } from './areas/site-audit/routes.js';
import { tlsScanRoutes } from './areas/tls-scan/routes.js';
import { webhookRoutes } from './areas/webhooks/routes.js';
import type { DownloadSpec, RouteSpec } from './route-spec.js';

/** The routes that do the work: the scans, renders, link checks, crawls and bookmark files. */
const work: RouteSpec[] = [
  ...metaScanRoutes,
  ...tlsScanRoutes,
  ...linkExtractRoutes,
  ...renderRoutes,
  ...crawlRoutes,
  ...bookmarkCheckRoutes,
  ...bookmarkRoutes,
  ...siteAuditRoutes,
];

/**
 * The operations a key may be limited to (`allowedOperations`): the credit-spending routes, in the
 * table's order; free reads (quota, job polls, downloads) stay open to every key.
 */
export const KEY_OPERATIONS = creditSpending(work);

export const routes: RouteSpec[] = [
  ...work,
  ...sessionRoutes,
  ...webhookRoutes,
  ...monitorRoutes,
  ...monitorStatusRoutes,
  ...accountRoutes(KEY_OPERATIONS),
  ...paymentRoutes,
  ...accountMailRoutes,
];

/** Result files, streamed from the service that stored them: free, no credential needed. */
export const downloads: DownloadSpec[] = [
  ...renderDownloads,
  ...bookmarkCheckDownloads,
  ...bookmarkDownloads,
  ...monitorStatusDownloads,
  ...monitorImageDownloads,
  ...siteAuditImageDownloads,
];

function creditSpending(specs: readonly RouteSpec[]): readonly [string, ...string[]] {
  const [first, ...rest] = specs.filter((spec) => spec.credits > 0).map((spec) => spec.operation);
  if (!first) throw new Error('no route spends credits');
  return [first, ...rest];
}
