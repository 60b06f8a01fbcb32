/**
 * A site audit as CSV (decision 0476): the issue list of a finished audit (one row per issue type),
 * and one issue type's affected URLs (one row per URL, the page the issue route lists). Pure, from
 * the presented JSON, as the link checks' exports (decision 0217); csv-stringify quotes and escapes
 * formulas, since a site's authored titles and URLs reach the cells.
 */
import { stringify } from 'csv-stringify/sync';
import { HttpError } from '../../envelope.js';
import type { ExportAnswer } from '../../route-spec.js';

const CSV_TYPE = 'text/csv; charset=utf-8';

interface Affected {
  url: string;
  detail: string;
  sources: readonly string[];
}

interface Issue {
  id: string;
  category: string;
  priority: string;
  title: string;
  fix: string;
  pagesAffected: number;
  affectedTotal: number;
  affected: readonly Affected[];
}

interface AuditFields {
  status: string;
  result?: { issues: readonly Issue[] };
}

const safe = (text: string) => text.replace(/[^A-Za-z0-9._-]+/g, '-').slice(0, 100);

const csv = (columns: string[], rows: unknown[][]) =>
  stringify([columns, ...rows], { record_delimiter: 'windows', escape_formulas: true });

function notDone(status: string): HttpError {
  return new HttpError(
    409,
    'job_not_finished',
    status === 'failed'
      ? 'the audit failed: it has no issues to download'
      : 'the audit is still running: its issues can be downloaded once its status is done',
  );
}

/** GET /v1/site-audit/{job_id}?format=csv: a row per issue type found. */
export const auditCsv: ExportAnswer<{ job_id: string }, AuditFields> = {
  formats: ['csv'],
  contentTypes: ['text/csv'],
  description:
    'csv: the finished audit’s issues as a file, a row per issue type (id, category, priority, title, ' +
    'pages affected, affected URLs, fix); each type’s URLs are its issue route’s CSV. A job not done is a 409.',
  errors: { job_not_finished: 409 },
  render: (_format, fields, input) => {
    if (fields.status !== 'done' || !fields.result) throw notDone(fields.status);
    const columns = ['issue', 'category', 'priority', 'title', 'pagesAffected', 'affectedTotal', 'fix'];
    const rows = fields.result.issues.map((i) => [
      i.id,
      i.category,
      i.priority,
      i.title,
      i.pagesAffected,
      i.affectedTotal,
      i.fix,
    ]);
    return { body: csv(columns, rows), contentType: CSV_TYPE, fileName: `site-audit-${safe(input.job_id)}.csv` };
  },
};

/** GET /v1/site-audit/{job_id}/issues/{issue_id}?format=csv: a row per affected URL of the page asked for. */
export const issueCsv: ExportAnswer<{ job_id: string; issue_id: string }, { issue: Issue }> = {
  formats: ['csv'],
  contentTypes: ['text/csv'],
  description:
    'csv: the issue type’s affected URLs as a file, a row per URL (issue, priority, url, detail, sources ' +
    'separated by spaces), the same page (offset, limit) as the JSON.',
  render: (_format, fields, input) => {
    const { issue } = fields;
    const columns = ['issue', 'priority', 'url', 'detail', 'sources'];
    const rows = issue.affected.map((a) => [issue.id, issue.priority, a.url, a.detail, a.sources.join(' ')]);
    return {
      body: csv(columns, rows),
      contentType: CSV_TYPE,
      fileName: `site-audit-${safe(input.job_id)}-${safe(input.issue_id)}.csv`,
    };
  },
};
