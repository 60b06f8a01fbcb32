/** Where the crawl service's replies differ in shape from the spec's JSON, and their exports. */
import { parseTargetUrl } from '@webutil/kit';
import type { ExtractLinksResponse } from '@webutil/proto/webutil/crawl/v1/crawl';
import { HttpError } from '../../envelope.js';
import type { ExportAnswer } from '../../route-spec.js';
import { isReportFormat, type LinkReport, REPORT_FORMATS, REPORT_TYPES, renderReport } from './link-report.js';

/** The one-page extraction's fields are the reply's `result`. */
export const presentExtract = (reply: ExtractLinksResponse) => reply.result;

const FORMATS_TEXT =
  'csv (a row per link and page it is on), md (a Markdown report of what is broken), junit (JUnit XML: a ' +
  'suite per page, a failing case per broken link) or sarif (SARIF 2.1.0: a result per broken or warning link ' +
  'and page, for code-scanning annotations), downloaded with a Content-Disposition file name; without it, JSON.';

const reportFormat = (format: string) => {
  if (!isReportFormat(format)) throw new Error(`not a report format: ${format}`);
  return format;
};

const common = {
  formats: REPORT_FORMATS,
  // Media types without their parameters, as the contract's content keys.
  contentTypes: [...new Set(Object.values(REPORT_TYPES).map((t) => t.contentType.split(';')[0] as string))],
};

/** POST /v1/broken-links?format=…: the page checked is every link's source. */
export const brokenLinksExport: ExportAnswer<{ url: string }, LinkReport> = {
  ...common,
  description: `The result as a file: ${FORMATS_TEXT} A bad value is a 400 before anything is spent.`,
  render: (format, fields, input) =>
    renderReport(reportFormat(format), fields, { pageUrl: fields.url ?? parseTargetUrl(input.url).href }),
};

/** GET /v1/broken-links/crawl/{job_id}?format=…: once the crawl is done; a 409 before. */
export const crawlExport: ExportAnswer<{ job_id: string }, { status: string; result?: LinkReport }> = {
  ...common,
  description: `The finished crawl's result as a file: ${FORMATS_TEXT} A crawl not done yet is a 409.`,
  errors: { job_not_finished: 409 },
  render: (format, fields, input) => {
    if (fields.status !== 'done' || !fields.result)
      throw new HttpError(
        409,
        'job_not_finished',
        fields.status === 'failed'
          ? 'the crawl failed: it has no result to download'
          : 'the crawl is still running: its result can be downloaded once its status is done',
      );
    return renderReport(reportFormat(format), fields.result, { jobId: input.job_id });
  },
};
