/**
 * Service clients that answer from the sandbox's samples (edge/src/areas/<area>/samples.ts) and
 * call no service: the pipeline hands them to a route's `call` in place of the real ones for a
 * sandbox caller's credit-spending call, and for a job poll or download of a sample id
 * (docs/decisions/0207-sandbox-keys.md). An RPC without a sample is a 500 naming it, which the
 * sandbox test meets for a new route at once.
 */
import { DownloadKind } from '@webutil/proto/webutil/bookmark/v1/bookmark';
import * as bookmarkSamples from '../areas/bookmark/samples.js';
import * as bookmarkCheckSamples from '../areas/bookmark-check/samples.js';
import * as crawlSamples from '../areas/crawl/samples.js';
import * as metaScanSamples from '../areas/meta-scan/samples.js';
import * as renderSamples from '../areas/render/samples.js';
import * as siteAuditSamples from '../areas/site-audit/samples.js';
import * as tlsScanSamples from '../areas/tls-scan/samples.js';
import type { Clients } from '../clients.js';
import { HttpError } from '../envelope.js';
import type { Caller, RouteSpec } from '../route-spec.js';
import { isSample, SAMPLE_FILES, SAMPLE_JOBS, type SampleFile, sampleFileParts } from './files.js';

/** Some of a client's RPCs, each typed as the real one. */
type Sampled<C> = Partial<Omit<C, 'close'>>;

const sampleJob = <R>(id: string, reply: R) => {
  return async ({ jobId }: { jobId: string }): Promise<R> => {
    if (jobId !== id) throw new HttpError(404, 'job_not_found', 'no sandbox sample job has that id');
    return reply;
  };
};

const metaScan: Sampled<Clients['metaScan']> = {
  downCheck: async () => metaScanSamples.downCheck,
  metaScan: async () => metaScanSamples.metaScan,
};

const tlsScan: Sampled<Clients['tlsScan']> = {
  sslScan: async () => tlsScanSamples.sslScan,
};

const render: Sampled<Clients['render']> = {
  screenshot: async () => renderSamples.screenshot,
  urlToPdf: async () => renderSamples.urlToPdf,
  readArtifact: ({ filename }) => {
    if (filename !== SAMPLE_FILES.screenshot.name && filename !== SAMPLE_FILES.pdf.name)
      throw new HttpError(404, 'file_not_found', 'no sandbox sample file has that name');
    return sampleFileParts(filename);
  },
};

const crawl: Sampled<Clients['crawl']> = {
  extractLinks: async () => crawlSamples.extractLinks,
  checkLinks: async () => crawlSamples.checkLinks,
  startBrokenLinkCrawl: async () => ({ jobId: SAMPLE_JOBS.brokenLinksCrawl }),
  getBrokenLinkCrawl: sampleJob(SAMPLE_JOBS.brokenLinksCrawl, crawlSamples.brokenLinkCrawl),
  startLinkExtractCrawl: async () => ({ jobId: SAMPLE_JOBS.linkExtractCrawl }),
  getLinkExtractCrawl: sampleJob(SAMPLE_JOBS.linkExtractCrawl, crawlSamples.linkExtractCrawl),
  startBookmarkCheck: async () => ({ jobId: SAMPLE_JOBS.bookmarksCheck }),
  getBookmarkCheck: sampleJob(SAMPLE_JOBS.bookmarksCheck, bookmarkCheckSamples.bookmarkCheck),
  getBookmarkCheckEdits: sampleJob(SAMPLE_JOBS.bookmarksCheck, bookmarkCheckSamples.bookmarkCheckEdits),
  // Nothing was started, so nothing is withdrawn.
  withdrawStart: async () => ({ found: false }),
};

/** Each bookmark download kind's sample file. */
const DOWNLOADS: Partial<Record<DownloadKind, SampleFile>> = {
  [DownloadKind.DOWNLOAD_KIND_DECRYPTED]: SAMPLE_FILES.xbel,
  [DownloadKind.DOWNLOAD_KIND_HTML]: SAMPLE_FILES.html,
  [DownloadKind.DOWNLOAD_KIND_XBEL_FROM_HTML]: SAMPLE_FILES.xbel,
};

const bookmark: Sampled<Clients['bookmark']> = {
  decryptXbel: async () => bookmarkSamples.converted(SAMPLE_FILES.xbel, 'Sandbox sample: the file was not read.'),
  convertXbelToHtml: async () => bookmarkSamples.converted(SAMPLE_FILES.html, 'Sandbox sample: the file was not read.'),
  convertHtmlToXbel: async () => bookmarkSamples.converted(SAMPLE_FILES.xbel, 'Sandbox sample: the file was not read.'),
  readDownload: ({ kind, storedName }) => {
    const file = DOWNLOADS[kind];
    if (file?.name !== storedName) throw new HttpError(404, 'file_not_found', 'no sandbox sample file has that name');
    return sampleFileParts(storedName);
  },
  parseBookmarks: async () => bookmarkCheckSamples.parsedBookmarks,
  readCleanedBookmarks: ({ fileId, format }) => {
    if (fileId !== bookmarkCheckSamples.parsedBookmarks.fileId)
      throw new HttpError(404, 'file_not_found', 'no sandbox sample file has that id');
    return sampleFileParts(format === 'html' ? SAMPLE_FILES.html.name : SAMPLE_FILES.xbel.name);
  },
};

/** The client of `service`: its sampled RPCs; any other is a 500 naming it. */
function sampledClient<C>(service: string, rpcs: Sampled<C>): C {
  return new Proxy(rpcs, {
    get: (target, rpc: string) => {
      if (rpc === 'close') return () => undefined;
      const sampled = (target as Record<string, unknown>)[rpc];
      if (sampled) return sampled;
      return () => {
        throw new HttpError(500, 'internal_error', `the sandbox has no sample for ${service}.${rpc}`);
      };
    },
  }) as C;
}

const siteAudit: Sampled<Clients['siteAudit']> = {
  startSiteAudit: async () => ({ jobId: SAMPLE_JOBS.siteAudit }),
  getSiteAudit: sampleJob(SAMPLE_JOBS.siteAudit, siteAuditSamples.siteAudit),
  getSiteAuditIssue: sampleJob(SAMPLE_JOBS.siteAudit, siteAuditSamples.siteAuditIssue),
};

const sampled = {
  billing: sampledClient<Clients['billing']>('billing', {}),
  payments: sampledClient<Clients['payments']>('payments', {}),
  accountMail: sampledClient<Clients['accountMail']>('accountMail', {}),
  metaScan: sampledClient('metaScan', metaScan),
  crawl: sampledClient('crawl', crawl),
  siteAudit: sampledClient('siteAudit', siteAudit),
  render: sampledClient('render', render),
  bookmark: sampledClient('bookmark', bookmark),
  tlsScan: sampledClient('tlsScan', tlsScan),
};
const made = new WeakMap<Clients, Clients>();

/**
 * The sandbox's clients beside the real ones: the services' RPCs answered from samples, billing's
 * webhook books kept real, so a sandbox start's webhook is reserved, and then delivered with the
 * sample job's envelope, as a live start's is (decision 0207); the monitor service's too (its free
 * routes refuse a sandbox caller themselves).
 */
export function sandboxClientsFor(real: Clients): Clients {
  let clients = made.get(real);
  if (!clients) {
    clients = { ...sampled, webhooks: real.webhooks, monitor: real.monitor, monitorStatus: real.monitorStatus };
    made.set(real, clients);
  }
  return clients;
}

/**
 * The call is answered from samples: a sandbox caller's credit-spending call, or any caller's job
 * poll or download of a sample id (sample files and jobs are fixed public bytes, the same for all).
 */
export function answersFromSamples(
  spec: Pick<RouteSpec, 'credits'>,
  caller: Pick<Caller, 'sandbox'> | undefined,
  params: Record<string, unknown> | undefined,
): boolean {
  if (caller?.sandbox && spec.credits > 0) return true;
  return Object.values(params ?? {}).some(isSample);
}
