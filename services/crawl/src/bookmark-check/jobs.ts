import { failedPrecondition, invalidArgument } from '@webutil/kit';
import type {
  GetBookmarkCheckEditsRequest,
  GetBookmarkCheckEditsResponse,
  GetBookmarkCheckResponse,
  StartBookmarkCheckRequest,
} from '@webutil/proto/webutil/crawl/v1/crawl';
import type { CrawlReader } from '../jobs/read.js';
import type { CrawlStarts } from '../jobs/start.js';
import type { CrawlJobView } from '../model.js';
import { editsOf, listProgress, MAX_BOOKMARKS, packInput, unpackInput } from './check-bookmarks.js';

/** The bookmark check's three RPCs over the crawl job roles (start.ts, read.ts). */
export class BookmarkChecks {
  constructor(
    private readonly starts: CrawlStarts,
    private readonly reader: CrawlReader,
  ) {}

  async start(request: StartBookmarkCheckRequest, requestId: string, signal: AbortSignal): Promise<string> {
    if (request.bookmarks.length === 0) throw invalidArgument('NO_BOOKMARKS', 'the file holds no bookmarks to check');
    if (request.bookmarks.length > MAX_BOOKMARKS)
      throw invalidArgument('TOO_MANY_BOOKMARKS', `at most ${MAX_BOOKMARKS} bookmarks are checked at once`);
    const input = packInput({
      bookmarks: request.bookmarks,
      totalBookmarks: Math.max(request.totalBookmarks, request.bookmarks.length),
      fileId: request.fileId,
      sourceFormat: request.sourceFormat,
    });
    const progress = listProgress(request.bookmarks.length, 0, 0, 'queued', 'Waiting for a crawl worker');
    return this.starts.startList('bookmarks', input, progress, requestId, signal, request.caller);
  }

  async get(jobId: string): Promise<GetBookmarkCheckResponse> {
    return toBookmarkCheckJob(await this.reader.get('bookmarks', jobId));
  }

  async edits(request: GetBookmarkCheckEditsRequest): Promise<GetBookmarkCheckEditsResponse> {
    const job = await this.reader.get('bookmarks', request.jobId);
    if (job.status !== 'done' || job.result?.kind !== 'bookmarks' || !job.input)
      throw failedPrecondition('JOB_NOT_DONE', 'the check has not finished: cleaned files come from a finished check');
    const input = unpackInput(job.input);
    return { fileId: input.fileId, sourceFormat: input.sourceFormat, ...editsOf(job.result.result, request) };
  }
}

export function toBookmarkCheckJob(job: CrawlJobView): GetBookmarkCheckResponse {
  const p = job.progress;
  return {
    jobId: job.id,
    status: job.status,
    progress: {
      phase: p.phase,
      message: p.message,
      bookmarksTotal: p.linksFound,
      urlsTotal: p.linksTotal,
      urlsChecked: p.linksChecked,
    },
    result: job.result?.kind === 'bookmarks' ? job.result.result : undefined,
    error: job.error,
  };
}
