/**
 * The sandbox's fixed replies for a bookmark check, typed as the service's ts-proto replies: the
 * compiler checks them against the protos, and the area's presenters turn them into the answers
 * (docs/decisions/0207-sandbox-keys.md). The sandbox's clients (edge/src/sandbox/clients.ts) serve
 * them.
 */
import type { ParseBookmarksResponse } from '@webutil/proto/webutil/bookmark/v1/bookmark';
import type {
  BookmarkCheckResult,
  GetBookmarkCheckEditsResponse,
  GetBookmarkCheckResponse,
} from '@webutil/proto/webutil/crawl/v1/crawl';
import { SAMPLE_JOBS, SAMPLE_PREFIX, SAMPLE_SCANNED_AT as SCANNED_AT, SAMPLE_URL as URL } from '../../sandbox/files.js';
import { breakdown } from '../crawl/samples.js';

/** The sample bookmark file as the bookmark service reads it. */
export const parsedBookmarks: ParseBookmarksResponse = {
  fileId: `${SAMPLE_PREFIX}bookmarks`,
  sourceFormat: 'xbel',
  totalBookmarks: 2,
  bookmarks: [
    { title: 'Example', url: URL, folderPath: ['Sandbox sample'], addedAt: undefined },
    { title: 'Docs', url: 'https://example.org/docs', folderPath: ['Sandbox sample'], addedAt: undefined },
  ],
};

const bookmarkCounts = { ok: 1, redirected: 0, broken: 1, warnings: 0, unchecked: 0, duplicates: 0 };

const bookmarkResult: BookmarkCheckResult = {
  scannedAt: SCANNED_AT,
  sourceFormat: 'xbel',
  totalBookmarks: 2,
  checkedBookmarks: 2,
  uniqueUrls: 2,
  truncated: false,
  healthScore: 50,
  grade: 'D',
  // Both bookmarks are in the one folder: its counts are the whole file's.
  summary: { ...bookmarkCounts, byFolder: [{ folderPath: ['Sandbox sample'], total: 2, ...bookmarkCounts }] },
  statusBreakdown: breakdown,
  bookmarks: [
    {
      index: 0,
      title: 'Example',
      url: URL,
      folderPath: ['Sandbox sample'],
      addedAt: undefined,
      statusCode: 200,
      statusText: 'OK',
      severity: 'ok',
      reason: 'The link works.',
      finalUrl: undefined,
      permanentRedirect: false,
      duplicateOf: undefined,
    },
    {
      index: 1,
      title: 'Docs',
      url: 'https://example.org/docs',
      folderPath: ['Sandbox sample'],
      addedAt: undefined,
      statusCode: 404,
      statusText: 'Not Found',
      severity: 'broken',
      reason: 'The page does not exist (404).',
      finalUrl: undefined,
      permanentRedirect: false,
      duplicateOf: undefined,
    },
  ],
};

export const bookmarkCheck: GetBookmarkCheckResponse = {
  jobId: SAMPLE_JOBS.bookmarksCheck,
  status: 'done',
  progress: {
    phase: 'done',
    message: 'Done: 2 bookmarks checked.',
    bookmarksTotal: 2,
    urlsTotal: 2,
    urlsChecked: 2,
  },
  result: bookmarkResult,
  error: undefined,
};

/** A cleaned copy of the sample file is the sample file itself: its edits change nothing. */
export const bookmarkCheckEdits: GetBookmarkCheckEditsResponse = {
  fileId: parsedBookmarks.fileId,
  sourceFormat: 'xbel',
  drop: [],
  rewrites: [],
};
