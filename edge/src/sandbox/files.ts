import { HttpError } from '../envelope.js';

/**
 * The sandbox's sample ids and files (docs/decisions/0207-sandbox-keys.md); each area's sample
 * replies are in edge/src/areas/<area>/samples.ts. Sample files are: fixed public bytes, the same for
 * every caller, downloaded by names no service ever gives a file (its names are random and longer).
 */

/** What every sample id and file name starts with: a real job id is a UUID, a stored name 32 random characters. */
export const SAMPLE_PREFIX = 'sandbox-';

/** A name or id the sandbox answers for. */
export const isSample = (value: unknown): boolean => typeof value === 'string' && value.startsWith(SAMPLE_PREFIX);

/** The page every sample reply is about, and when it was scanned. */
export const SAMPLE_URL = 'https://example.com/';
export const SAMPLE_SCANNED_AT = '2026-01-15T09:30:00.000Z';

/** The sample jobs: a start answers its id, a poll of it the sample's finished job. */
export const SAMPLE_JOBS = {
  brokenLinksCrawl: `${SAMPLE_PREFIX}broken-links-crawl`,
  linkExtractCrawl: `${SAMPLE_PREFIX}link-extract-crawl`,
  bookmarksCheck: `${SAMPLE_PREFIX}bookmarks-check`,
  siteAudit: `${SAMPLE_PREFIX}site-audit`,
} as const;

export interface SampleFile {
  name: string;
  contentType: string;
  bytes: Buffer;
}

/** A 32×20 checkerboard in the website's blue. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAACAAAAAUCAIAAABj86gYAAAAMElEQVR42mPQztkARy8+/IIjaokzjFpA0AJa' +
    'GIosPmoBYQtGk+loPhi1YDQfDAILAIXOH4yYPyh2AAAAAElFTkSuQmCC',
  'base64',
);

/** A one-page PDF that says what it is; the cross-reference offsets are counted as it is built. */
function samplePdf(): Buffer {
  const text = 'BT /F1 24 Tf 72 720 Td (Web Utility API sandbox sample) Tj ET';
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${text.length} >>\nstream\n${text}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let body = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((object, i) => {
    offsets.push(body.length);
    body += `${i + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = body.length;
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) body += `${String(offset).padStart(10, '0')} 00000 n \n`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}

const XBEL = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE xbel PUBLIC "+//IDN python.org//DTD XML Bookmark Exchange Language 1.0//EN//XML"
  "http://pyxml.sourceforge.net/topics/dtds/xbel.dtd">
<xbel version="1.0">
  <folder>
    <title>Sandbox sample</title>
    <bookmark href="https://example.com/"><title>Example</title></bookmark>
    <bookmark href="https://example.org/docs"><title>Docs</title></bookmark>
  </folder>
</xbel>
`;

const HTML = `<!DOCTYPE NETSCAPE-Bookmark-file-1>
<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=UTF-8">
<TITLE>Bookmarks</TITLE>
<H1>Bookmarks</H1>
<DL><p>
  <DT><H3>Sandbox sample</H3>
  <DL><p>
    <DT><A HREF="https://example.com/">Example</A>
    <DT><A HREF="https://example.org/docs">Docs</A>
  </DL><p>
</DL><p>
`;

export const SAMPLE_FILES = {
  screenshot: { name: `${SAMPLE_PREFIX}screenshot.png`, contentType: 'image/png', bytes: PNG },
  pdf: { name: `${SAMPLE_PREFIX}page.pdf`, contentType: 'application/pdf', bytes: samplePdf() },
  xbel: { name: `${SAMPLE_PREFIX}bookmarks.xbel`, contentType: 'application/xml', bytes: Buffer.from(XBEL) },
  html: { name: `${SAMPLE_PREFIX}bookmarks.html`, contentType: 'text/html', bytes: Buffer.from(HTML) },
} satisfies Record<string, SampleFile>;

/** The sample file of that name, as a streaming RPC sends it (one message); a NOT_FOUND-like failure otherwise. */
export function sampleFileParts(name: string, as?: string) {
  const file = Object.values(SAMPLE_FILES).find((candidate) => candidate.name === name);
  if (!file) throw new HttpError(404, 'file_not_found', 'no sandbox sample file has that name');
  const part = {
    contentType: file.contentType,
    sizeBytes: String(file.bytes.length),
    fileName: as ?? file.name,
    chunk: file.bytes,
  };
  return (async function* () {
    yield part;
  })();
}
