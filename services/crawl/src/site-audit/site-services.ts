/**
 * The site-level checks other services make, once per audit (decision 0489): the TLS scan of the
 * start URL's host (tls-scan), a down-check of the start URL (meta-scan) and screenshots of the
 * start page, desktop and mobile (render), called over gRPC as the edge and the monitor call them.
 * A sub-check that fails, or whose service is not configured, is reported as not available with
 * why; it never fails the audit. The screenshots are copied into the crawl's own artifact store
 * for as long as the job is kept (render keeps its files minutes).
 */
import { type CallOptions, connectService, type ServiceClient } from '@webutil/kit';
import type { ArtifactStore } from '@webutil/kit/artifacts';
import type {
  SiteDownCheck,
  SiteLevelChecks,
  SiteScreenshot,
  SiteTls,
} from '@webutil/proto/webutil/crawl/v1/site_audit';
import { MetaScanServiceService } from '@webutil/proto/webutil/metascan/v1/metascan';
import { Device, ImageFormat, RenderServiceService, ScreenshotRequest } from '@webutil/proto/webutil/render/v1/render';
import { type SslScanResponse, TlsScanServiceService } from '@webutil/proto/webutil/tlsscan/v1/tlsscan';
import type { Finding } from './page-checks.js';

/** Where the screenshots are served: the edge's download route of ReadSiteAuditImage. */
export const SITE_AUDIT_IMAGE_PATH = '/v1/site-audit-images';

export interface SiteServiceClients {
  tlsScan?: ServiceClient<typeof TlsScanServiceService>;
  metaScan?: ServiceClient<typeof MetaScanServiceService>;
  render?: ServiceClient<typeof RenderServiceService>;
}

export interface SiteServiceAddresses {
  TLS_SCAN_ADDR?: string;
  META_SCAN_ADDR?: string;
  RENDER_ADDR?: string;
}

/** A client for each service whose address is configured. */
export function connectSiteServices(addresses: SiteServiceAddresses): SiteServiceClients {
  return {
    tlsScan: addresses.TLS_SCAN_ADDR ? connectService(TlsScanServiceService, addresses.TLS_SCAN_ADDR) : undefined,
    metaScan: addresses.META_SCAN_ADDR ? connectService(MetaScanServiceService, addresses.META_SCAN_ADDR) : undefined,
    render: addresses.RENDER_ADDR ? connectService(RenderServiceService, addresses.RENDER_ADDR) : undefined,
  };
}

export function closeSiteServices(clients: SiteServiceClients): void {
  for (const client of Object.values(clients)) client?.close();
}

export interface SiteServicesOf {
  clients: SiteServiceClients;
  images: ArtifactStore;
}

/** The routes' own budgets: ssl-scan and down-check 30 s, a screenshot 60 s. */
const TLS_TIMEOUT_MS = 30_000;
const DOWN_TIMEOUT_MS = 30_000;
const SCREENSHOT_TIMEOUT_MS = 60_000;
/** A certificate expiring within this many days is a warning. */
export const EXPIRY_WARNING_DAYS = 30;
/** Grades at or below this one (with a good certificate) are weak. */
const WEAK_GRADES = new Set(['C', 'D', 'E', 'F']);

const NOT_CONFIGURED = 'the service is not configured for the crawl service';

/** Why a call failed, in a few words (a gRPC error's details, without its code prefix). */
function why(err: unknown): string {
  const details = (err as { details?: unknown }).details;
  const text = typeof details === 'string' && details ? details : err instanceof Error ? err.message : String(err);
  return text.slice(0, 200);
}

/** The site's TLS facts and what is wrong with them, from a (fast) scan. */
export function tlsOf(reply: SslScanResponse): SiteTls {
  const problems: string[] = [];
  const days = reply.daysUntilExpiry;
  if (reply.isExpired) problems.push(`certificate expired ${-days} day(s) ago`);
  if (reply.trustMarker === 'T' && !reply.isExpired) problems.push('certificate not trusted');
  if (reply.trustMarker === 'M') problems.push('certificate name does not match the host');
  if (!reply.isExpired && days <= EXPIRY_WARNING_DAYS) problems.push(`certificate expires in ${days} day(s)`);
  const old = reply.protocols.filter((p) => p.supported && (p.version === 'TLSv1' || p.version === 'TLSv1.1'));
  if (old.length > 0) problems.push(`old protocols accepted: ${old.map((p) => p.version).join(', ')}`);
  if (!reply.trustMarker && WEAK_GRADES.has(reply.securityGrade)) problems.push(`grade ${reply.securityGrade}`);
  return {
    available: true,
    grade: reply.securityGrade,
    daysUntilExpiry: days,
    valid: reply.isValid,
    problems,
    protocol: reply.tlsVersion || reply.protocol,
  };
}

/** The findings of the site-level checks, on the site's origin (not a page: they are not scored). */
export function siteServiceFindings(entry: URL, site: SiteLevelChecks): Finding[] {
  const origin = entry.origin;
  const findings: Finding[] = [];
  const tls = site.tls;
  if (tls?.available) {
    const bad = tls.problems.filter((p) => /expired|not trusted|does not match/.test(p));
    const expiring = tls.problems.find((p) => p.startsWith('certificate expires'));
    const weak = tls.problems.filter((p) => p.startsWith('old protocols') || p.startsWith('grade'));
    if (bad.length > 0) findings.push({ id: 'tls_certificate_invalid', url: origin, detail: bad.join('; ') });
    else if (expiring) findings.push({ id: 'tls_certificate_expiring', url: origin, detail: expiring });
    if (weak.length > 0) findings.push({ id: 'tls_weak', url: origin, detail: weak.join('; ') });
  }
  const down = site.downCheck;
  if (down?.available && down.verdict === 'down')
    findings.push({ id: 'site_down', url: origin, detail: `${entry.href}: ${down.reason ?? 'down'}` });
  return findings;
}

async function scanTls(entry: URL, clients: SiteServiceClients, options: CallOptions): Promise<SiteTls> {
  if (entry.protocol !== 'https:')
    return { available: false, unavailableReason: 'the site is served over http: no TLS to scan', problems: [] };
  if (!clients.tlsScan) return { available: false, unavailableReason: NOT_CONFIGURED, problems: [] };
  try {
    const port = entry.port ? Number(entry.port) : undefined;
    const reply = await clients.tlsScan.sslScan(
      { domain: entry.hostname.replace(/^\[|\]$/g, ''), port, fast: true },
      { ...options, timeoutMs: TLS_TIMEOUT_MS },
    );
    return tlsOf(reply);
  } catch (err) {
    return { available: false, unavailableReason: `the TLS scan failed: ${why(err)}`, problems: [] };
  }
}

async function downCheck(entry: URL, clients: SiteServiceClients, options: CallOptions): Promise<SiteDownCheck> {
  if (!clients.metaScan) return { available: false, unavailableReason: NOT_CONFIGURED };
  const checkedAt = new Date().toISOString();
  try {
    const reply = await clients.metaScan.downCheck({ url: entry.href }, { ...options, timeoutMs: DOWN_TIMEOUT_MS });
    return {
      available: true,
      up: reply.verdict !== 'down',
      verdict: reply.verdict,
      status: reply.httpsStatus,
      responseTimeMs: reply.responseTimeMs,
      reason: reply.reason,
      checkedAt,
    };
  } catch (err) {
    return { available: false, unavailableReason: `the down-check failed: ${why(err)}` };
  }
}

async function screenshot(
  entry: URL,
  device: Device,
  of: SiteServicesOf,
  expiresAt: Date,
  options: CallOptions,
): Promise<SiteScreenshot> {
  const render = of.clients.render;
  if (!render) return { available: false, unavailableReason: NOT_CONFIGURED };
  try {
    const call = { ...options, timeoutMs: SCREENSHOT_TIMEOUT_MS };
    const reply = await render.screenshot(
      ScreenshotRequest.fromPartial({ url: entry.href, format: ImageFormat.IMAGE_FORMAT_PNG, device, fullPage: false }),
      call,
    );
    const parts: Buffer[] = [];
    for await (const part of render.readArtifact({ filename: reply.filename }, call))
      parts.push(Buffer.from(part.chunk));
    const body = Buffer.concat(parts);
    const image = await of.images.put({
      body,
      extension: reply.fileExtension,
      contentType: `image/${reply.format}`,
      ttlMs: Math.max(60_000, expiresAt.getTime() - Date.now()),
    });
    return {
      available: true,
      imageUrl: `${SITE_AUDIT_IMAGE_PATH}/${image.name}`,
      format: reply.format,
      sizeBytes: body.length,
    };
  } catch (err) {
    return { available: false, unavailableReason: `the screenshot failed: ${why(err)}` };
  }
}

/** What an audit's site-level checks give its result and its issue list. */
export interface SiteLevel {
  site?: SiteLevelChecks;
  findings: Finding[];
}

/**
 * The site-level checks of an audit, started beside its crawl by either engine: what they found,
 * nothing when no service is configured. Never rejects (each check answers, available or not).
 */
export async function siteLevelChecks(
  entry: URL,
  services: SiteServicesOf | undefined,
  of: { expiresAt: Date; jobId: string },
): Promise<SiteLevel> {
  if (!services) return { findings: [] };
  const site = await checkSiteServices(entry, services, of.expiresAt, of.jobId);
  return { site, findings: siteServiceFindings(entry, site) };
}

/** All the site-level checks at once; each answers, available or not. */
export async function checkSiteServices(
  entry: URL,
  of: SiteServicesOf,
  expiresAt: Date,
  requestId: string,
): Promise<SiteLevelChecks> {
  const options: CallOptions = { requestId, timeoutMs: SCREENSHOT_TIMEOUT_MS };
  const [tls, down, desktop, mobile] = await Promise.all([
    scanTls(entry, of.clients, options),
    downCheck(entry, of.clients, options),
    screenshot(entry, Device.DEVICE_DESKTOP, of, expiresAt, options),
    screenshot(entry, Device.DEVICE_MOBILE, of, expiresAt, options),
  ]);
  return { tls, downCheck: down, screenshots: { desktop, mobile } };
}
