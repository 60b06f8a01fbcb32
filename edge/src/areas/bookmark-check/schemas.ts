/** Bookmark health: a bookmark file checked link by link, and cleaned copies of it. */
import * as crawl from '@webutil/proto/webutil/crawl/v1/crawl.fields';
import { z } from 'zod';
import { type UploadRules, uploadedFile } from '../../multipart.js';
import { count, required, timestamp } from '../../rest/common.js';
import { type FieldEdit, restEnum, restObject } from '../../rest/from-proto.js';

/** XBEL (plain or Floccus-encrypted) or a browser's bookmark HTML, at most 10 MB. */
export const BOOKMARK_UPLOAD: UploadRules = {
  field: 'file',
  maxBytes: 10 * 1024 * 1024,
  extensions: ['.xbel', '.html', '.htm', '.json'],
  contentTypes: ['application/octet-stream', 'text/html', 'application/xml', 'text/xml', 'application/json'],
};

const optionalText = (name: string, description: string) =>
  z
    .string({ error: `${name} must be a string` })
    .max(4096, `${name} is too long`)
    .optional()
    .meta({ description });

export const bookmarkCheckInput = z.object({
  file: uploadedFile(
    'An XBEL file (plain, or encrypted by Floccus with `key`) or a bookmark HTML export from a browser; at most ' +
      '10 MB, named .xbel, .html or .htm or sent as application/octet-stream, text/html or application/xml.',
  ),
  key: optionalText('key', 'The passphrase of a Floccus-encrypted file; not needed for a plain one.'),
  salt: optionalText(
    'salt',
    'For a Floccus file of an older release whose JSON has no salt: the salt it was encrypted with.',
  ),
});

const severity: FieldEdit = { value: restEnum(crawl.Severity) };
const counted: FieldEdit = { value: count };

const folderTallies = {
  total: counted,
  ok: counted,
  redirected: counted,
  broken: counted,
  warnings: counted,
  unchecked: counted,
  duplicates: counted,
} satisfies Record<string, FieldEdit>;

const BookmarkSummary = restObject(crawl.BookmarkSummary, {
  id: 'BookmarkSummary',
  description:
    'Bookmarks by outcome (each in one of ok, redirected, broken, warnings, unchecked; duplicates counted besides).',
  fields: {
    ok: { value: count, description: 'Answered well, without a redirect.' },
    redirected: { value: count, description: 'Answered after a redirect (finalUrl), not broken.' },
    broken: counted,
    warnings: { value: count, description: 'A warning other than a redirect (rate-limited, bot wall, slow...).' },
    unchecked: { value: count, description: 'Not an http(s) URL, or not reached within the time budget.' },
    duplicates: { value: count, description: 'Bookmarks whose URL an earlier bookmark has.' },
    byFolder: {
      value: restObject(crawl.FolderSummary, {
        id: 'BookmarkFolderSummary',
        fields: {
          folderPath: { description: 'Folder titles, outermost first; empty for the top level.' },
          ...folderTallies,
        },
      }),
      description: 'One row per folder holding bookmarks directly, in file order (at most 5,000).',
    },
  },
});

const CheckedBookmark = restObject(crawl.CheckedBookmark, {
  id: 'CheckedBookmark',
  fields: {
    index: { value: count, description: 'Position among the file’s bookmarks, 0-based, file order.' },
    folderPath: { description: 'Titles of the folders it is in, outermost first.' },
    addedAt: { value: timestamp, description: 'When it was added, when the file says.' },
    statusCode: { nullable: true, description: 'The final status; null when no response came or not checked.' },
    severity,
    finalUrl: { description: 'Where the redirects ended; only when redirected.' },
    permanentRedirect: {
      description:
        'The first redirect was permanent (301 or 308) and the final answer healthy: `update=redirects` uses it.',
    },
    duplicateOf: {
      value: count,
      description: 'Index of the first bookmark with the same URL, when this one repeats it.',
    },
  },
});

const BookmarkCheckResult = restObject(crawl.BookmarkCheckResult, {
  id: 'BookmarkCheckResult',
  fields: {
    scannedAt: { value: timestamp },
    sourceFormat: { value: z.enum(['xbel', 'html']), description: 'The uploaded file’s format.' },
    totalBookmarks: counted,
    checkedBookmarks: { value: count, description: 'Bookmarks listed and checked: the first 5,000.' },
    uniqueUrls: { value: count, description: 'Distinct URLs checked.' },
    truncated: { description: 'More than 5,000 bookmarks, or the 6-minute budget ended before every URL.' },
    healthScore: { value: z.number().int().min(0).max(100), description: 'As the broken-link check scores links.' },
    grade: { value: z.enum(['A+', 'A', 'B', 'C', 'D', 'F']) },
    summary: { value: BookmarkSummary },
    statusBreakdown: {
      value: restObject(crawl.StatusBreakdownRow, {
        id: 'BookmarkStatusBreakdownRow',
        fields: { severity, count: counted },
      }),
    },
    bookmarks: { value: CheckedBookmark },
  },
});

export const BookmarkCheckJob = restObject(crawl.GetBookmarkCheckResponse, {
  id: 'BookmarkCheckJob',
  fields: {
    status: { value: restEnum(crawl.JobStatus) },
    progress: {
      value: restObject(crawl.BookmarkCheckProgress, {
        id: 'BookmarkCheckProgress',
        fields: {
          phase: { value: restEnum(crawl.CrawlPhase).exclude(['sitemap', 'crawling']) },
          bookmarksTotal: { value: count, description: 'Bookmarks to check (at most 5,000).' },
          urlsTotal: { value: count, description: 'Distinct http(s) URLs among them.' },
          urlsChecked: counted,
        },
      }),
    },
    result: { value: BookmarkCheckResult },
    error: { value: restObject(crawl.JobError, { id: 'BookmarkCheckError' }) },
  },
});

/** `drop`: a comma-separated subset of broken and duplicates. */
const dropList = z
  .string()
  .optional()
  .transform((value, ctx) => {
    const items = (value ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    for (const item of items)
      if (item !== 'broken' && item !== 'duplicates') {
        ctx.addIssue({ code: 'custom', message: 'drop is a comma-separated list of broken and duplicates' });
        return z.NEVER;
      }
    return new Set(items);
  })
  .meta({ description: 'What to leave out: `broken`, `duplicates` or both, comma-separated. Default: nothing.' });

export const bookmarkDownloadInput = z.object({
  job_id: required('job_id').meta({ description: 'The jobId of the check.' }),
  format: z
    .enum(['xbel', 'html'], { error: 'format is xbel or html' })
    .optional()
    .meta({ description: 'xbel or html; default: the uploaded file’s format (only then is nothing else changed).' }),
  drop: dropList,
  update: z
    .enum(['redirects'], { error: 'update is redirects' })
    .optional()
    .meta({ description: '`redirects`: a permanently redirected bookmark gets its final URL.' }),
});
