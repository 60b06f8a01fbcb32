/** Bookmark health: a file's bookmarks checked as a job; polls are free, as are cleaned copies. */
import { noStore } from '../../envelope.js';
import { NEVER_CANCELLED } from '../../grpc-clients.js';
import { jobInput } from '../../rest/common.js';
import { type BlockPrice, type DownloadSpec, download, type RouteSpec, route, versioned } from '../../route-spec.js';
import { XBEL_FILE_ERRORS } from '../bookmark/routes.js';
import { CRAWL_START_ERRORS, crawlCaller, JOB_ERRORS, withdrawCrawlStart } from '../crawl/routes.js';
import { JobStarted } from '../crawl/schemas.js';
import { withWebhook } from '../webhooks/start.js';
import { BOOKMARK_UPLOAD, BookmarkCheckJob, bookmarkCheckInput, bookmarkDownloadInput } from './schemas.js';

/**
 * A bookmark check is two services' work (docs/decisions/0241): the bookmark service reads the
 * file (and keeps it for cleaned copies), the crawl service checks its URLs as a job. The edge
 * hands one's answer to the other unchanged.
 */
const BOOKMARK_FILE_ERRORS = {
  ...XBEL_FILE_ERRORS,
  key_required: 400,
  invalid_file: 400,
  invalid_xbel: 400,
  nesting_too_deep: 400,
  corrupted_file: 400,
  wrong_password: 400,
  no_bookmarks: 400,
  too_many_bookmarks: 400,
  file_too_complex: 400,
};

/**
 * A check's price grows with its list (decision 0351): the route's 2 credits pay for the first
 * 1,000 bookmarks, each further 1,000 begun (up to the 5,000 checked) costs 2 more. A block is
 * about what a broken-link crawl checks for its 2 credits (1,500 links at most).
 */
export const BOOKMARK_CHECK_BLOCKS: BlockPrice = { size: 1_000, unit: 'bookmarks', credits: 2, maxUnits: 5_000 };

export const bookmarkCheckRoutes: RouteSpec[] = [
  withWebhook(
    route({
      method: 'POST',
      path: '/bookmarks/check',
      operation: 'bookmarks-check',
      summary:
        'Checks every bookmark of an XBEL (plain or Floccus-encrypted) or browser bookmark HTML file (the first ' +
        '5,000, each URL once, within 6 minutes); poll its job, then download a cleaned copy.',
      credits: 2,
      perBlock: BOOKMARK_CHECK_BLOCKS,
      input: bookmarkCheckInput,
      upload: BOOKMARK_UPLOAD,
      output: JobStarted,
      status: 202,
      errors: { ...BOOKMARK_FILE_ERRORS, ...CRAWL_START_ERRORS },
      timeoutMs: 60_000,
      call: async (c, input, options, caller, price) => {
        const parsed = await c.bookmark.parseBookmarks(
          { fileName: input.file.name, file: input.file.bytes, key: input.key, salt: input.salt },
          options,
        );
        // Priced by the bookmarks it will check, before the job exists: a caller who cannot pay gets 402,
        // and the file kept for the job is deleted (decision 0351).
        await price(parsed.bookmarks.length).catch(async (err: unknown) => {
          await c.bookmark
            .discardBookmarks(
              { fileId: parsed.fileId },
              { requestId: options.requestId, timeoutMs: 5_000, signal: NEVER_CANCELLED },
            )
            .catch(() => undefined);
          throw err;
        });
        return c.crawl.startBookmarkCheck({ ...parsed, caller: crawlCaller(caller) }, options);
      },
      withdraw: withdrawCrawlStart,
    }),
    'bookmarks-check-status',
  ),
  route({
    method: 'GET',
    path: '/bookmarks/check/:job_id',
    operation: 'bookmarks-check-status',
    freeRead: 'job-poll',
    summary: 'A bookmark check’s progress, and its result once done.',
    credits: 0,
    input: jobInput,
    output: BookmarkCheckJob,
    errors: JOB_ERRORS,
    timeoutMs: 15_000,
    call: (c, input, options) => c.crawl.getBookmarkCheck({ jobId: input.job_id }, options),
    headers: noStore,
  }),
];

/** A cleaned copy of a checked file: free, no credential needed. */
export const bookmarkCheckDownloads: DownloadSpec[] = [
  download({
    paths: versioned('/bookmarks/check/:job_id/download'),
    operation: 'bookmarks-check-download',
    summary:
      'A cleaned copy of a checked file: broken bookmarks and/or duplicates left out, permanent redirects ' +
      'rewritten, nothing else changed; as long as the check’s job lives (30 minutes).',
    input: bookmarkDownloadInput,
    nameParam: 'job_id',
    disposition: 'attachment',
    contentTypes: ['application/xml', 'text/html'],
    errors: {
      job_not_found: 404,
      file_not_found: 404,
      job_not_done: 409,
      output_too_large: 422,
      file_too_complex: 422,
    },
    timeoutMs: 60_000,
    call: async function* (c, input, options) {
      const edits = await c.crawl.getBookmarkCheckEdits(
        {
          jobId: input.job_id,
          dropBroken: input.drop.has('broken'),
          dropDuplicates: input.drop.has('duplicates'),
          updateRedirects: input.update === 'redirects',
        },
        options,
      );
      yield* c.bookmark.readCleanedBookmarks(
        { fileId: edits.fileId, format: input.format ?? '', drop: edits.drop, rewrites: edits.rewrites, baseName: '' },
        options,
      );
    },
  }),
];
