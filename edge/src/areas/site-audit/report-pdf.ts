/**
 * A finished audit's report as a PDF (decision 0476): the website's report page (/site-audit/<job
 * id>) printed by our own render service, priced as a URL-to-PDF. The audit is read first, so a
 * job not done (or unknown) is a 409 (or 404) before anything is printed or spent.
 */
import { renderCaller } from '../../caller.js';
import type { Clients } from '../../clients.js';
import { HttpError } from '../../envelope.js';
import type { CallOptions } from '../../grpc-clients.js';
import { required } from '../../rest/common.js';
import { type RouteSpec, route } from '../../route-spec.js';
import { JOB_ERRORS } from '../crawl/routes.js';
import { pdfFile, pdfHeaders } from '../render/presenters.js';
import { RENDER_ERRORS, RENDER_TIMEOUT_MS } from '../render/routes.js';
import { PdfInput, PdfResult, pdfRequest } from '../render/schemas.js';

const ReportPdfInput = PdfInput.pick({ pageFormat: true, orientation: true, theme: true }).extend({
  job_id: required('job_id').meta({ description: 'The jobId of the audit.' }),
});

/** The report page's address, as the render service reaches this site (PUBLIC_BASE_URL). */
export const reportPageUrl = (publicBaseUrl: string, jobId: string) =>
  `${publicBaseUrl}/site-audit/${encodeURIComponent(jobId)}`;

const readReport = (c: Clients, reply: { filename: string }, options: CallOptions) =>
  c.render.readArtifact({ filename: reply.filename }, options);

export const reportPdfRoute: RouteSpec = route({
  method: 'POST',
  path: '/site-audit/:job_id/report.pdf',
  operation: 'site-audit-report-pdf',
  summary:
    'A finished audit’s report (summary, charts, a table per issue, the comparison) printed to PDF by the ' +
    'render service from its shareable page /site-audit/{job_id}; priced as a URL-to-PDF.',
  credits: 2,
  render: true,
  input: ReportPdfInput,
  output: PdfResult,
  envelope: 'top-level',
  errors: { ...RENDER_ERRORS, ...JOB_ERRORS, job_not_finished: 409 },
  timeoutMs: RENDER_TIMEOUT_MS,
  call: async (c, input, options, caller) => {
    const job = await c.siteAudit.getSiteAudit({ jobId: input.job_id }, options);
    if (job.status !== 'done')
      throw new HttpError(
        409,
        'job_not_finished',
        job.status === 'failed' ? 'the audit failed: it has no report' : 'the audit is still running',
      );
    const page = reportPageUrl(options.publicBaseUrl ?? '', input.job_id);
    const request = pdfRequest({
      url: page,
      pageFormat: input.pageFormat,
      orientation: input.orientation,
      theme: input.theme,
      // The page reads the audit after it loads: print once its report is drawn.
      waitForSelector: '#main[data-ready^="/site-audit/"]',
    });
    return c.render.urlToPdf({ ...request, caller: renderCaller(caller) }, options);
  },
  headers: pdfHeaders,
  file: { ...pdfFile, read: readReport },
});
