/** The subcommands: one per operation of the contract, named for what a terminal user asks. */
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ExportFormat, Schemas, Webutil, WebutilFile } from '@webutil/client';
import { type Command, Option } from 'commander';
import { EXIT, UsageError } from './exit.js';
import { addContractOptions, contractValues } from './options.js';
import { jobProgress, type Output, printFields, printTable, summary } from './output.js';

/** What each command gets: the client and the output, made from the global options. */
export interface Context {
  client(): Webutil;
  output(): Output;
  /** The exit code the command ends with (1: something found). */
  exit(code: number): void;
}

const GRADES = ['A+', 'A', 'B', 'C', 'D', 'F'];
const EXPORTS: readonly string[] = ['csv', 'md', 'junit', 'sarif'];

/** 1 when `grade` is below the `--fail-on` grade. */
function failsGrade(grade: string | undefined, failOn: string | undefined): boolean {
  if (!failOn || !grade) return false;
  return GRADES.indexOf(grade) > GRADES.indexOf(failOn);
}
const failOnOption = () => new Option('--fail-on <grade>', 'exit 1 when the grade is below this one').choices(GRADES);

/** Writes a file to -o (or stdout with -o - or no -o when `stdoutDefault`). */
async function save(file: WebutilFile, output: string | undefined, fallbackName: string): Promise<string> {
  const target = output ?? fallbackName;
  if (target === '-') {
    await pipeline(Readable.fromWeb(file.stream() as never), process.stdout, { end: false });
    return 'stdout';
  }
  await pipeline(Readable.fromWeb(file.stream() as never), createWriteStream(target));
  return target;
}

async function readUpload(path: string) {
  try {
    return { data: new Uint8Array(await readFile(path)), name: basename(path) };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UsageError(`cannot read ${path}: ${code === 'ENOENT' ? 'no such file' : (err as Error).message}`);
  }
}

const json = (value: unknown) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);

export function registerCommands(program: Command, ctx: Context): void {
  /** A render: its fields, then its file downloaded (free) to -o or the name the API gives. */
  const render = (name: string, operation: 'screenshot' | 'url-to-pdf', description: string) =>
    addContractOptions(
      program
        .command(`${name} <url>`)
        .description(description)
        .option('-o, --output <file>', 'where to save it (- for stdout); default: the name the API gives'),
      operation,
      ['url'],
    ).action(async (url: string, options: Record<string, unknown>) => {
      const client = ctx.client();
      const out = ctx.output();
      const body = { url, ...contractValues(operation, options) } as never;
      const answer = operation === 'screenshot' ? await client.screenshot(body) : await client.urlToPdf(body);
      const file = await client.download(`/api/uploads/${encodeURIComponent(answer.filename)}`);
      const saved = await save(file, options.output as string | undefined, answer.filename);
      if (out.json) json(answer);
      summary(out, true, `${file.contentType}, ${answer.sizeBytes} bytes → ${saved}`, saved === 'stdout');
    });
  render('screenshot', 'screenshot', 'A screenshot of a page (2 credits)');
  render('pdf', 'url-to-pdf', 'A PDF of a page (3 credits)');

  const links = program
    .command('links <url>')
    .description('Check the links of a page (3 credits), or of a whole site with --crawl')
    .option('--crawl', 'crawl the site and check every link (a job; progress on a terminal)')
    .addOption(
      new Option('--format <format>', 'table (default on a terminal), json, or an export').choices([
        'table',
        'json',
        ...EXPORTS,
      ]),
    )
    .option('-o, --output <file>', 'write the export (or JSON) here instead of stdout')
    .addOption(failOnOption());
  addContractOptions(links, 'broken-links-crawl', ['url']);
  links.action(async (url: string, options: Record<string, unknown>) => {
    const client = ctx.client();
    const format = options.format as string | undefined;
    const out = ctx.output();
    if (format === 'json') out.json = true;
    const exportFormat = format && EXPORTS.includes(format) ? (format as ExportFormat) : undefined;
    let result: Schemas['BrokenLinksResult'] | Schemas['BrokenLinkCrawlResult'];
    let pages: number | undefined;
    let file: WebutilFile | undefined;
    const started = Date.now();
    if (options.crawl) {
      const { jobId } = await client.startBrokenLinksCrawl({
        url,
        ...contractValues('broken-links-crawl', options),
      } as never);
      const bar = jobProgress(out, 'crawling');
      const job = await client
        .waitForJob('broken-links', jobId, {
          onProgress: ({ progress: p }) =>
            bar.update(
              p.linksChecked,
              p.linksTotal,
              `pages ${p.pagesCrawled}/${p.pagesDiscovered} · links checked ${p.linksChecked}/${p.linksTotal}`,
            ),
        })
        .finally(() => bar.stop());
      if (job.status === 'failed' || !job.result) {
        throw new Error(`the crawl failed: ${job.error?.message ?? job.progress.message}`);
      }
      result = job.result;
      pages = job.result.pagesCrawled;
      if (exportFormat) file = await client.exportBrokenLinksCrawl(jobId, exportFormat);
    } else {
      const body = { url, ...contractValues('broken-links', options) } as never;
      // The export is the replay of the check under the same Idempotency-Key: one check, paid once.
      const idempotencyKey = randomUUID();
      result = await client.brokenLinks(body, { idempotencyKey });
      if (exportFormat) file = await client.exportBrokenLinks(body, exportFormat, { idempotencyKey });
    }
    if (file) {
      const saved = await save(file, (options.output as string | undefined) ?? '-', '-');
      summary(out, true, `${exportFormat} export → ${saved}`, true);
    }
    const r = result;
    if (file) {
      // the export is the output
    } else if (out.json) {
      json(r);
    } else {
      const shown = r.links.filter((link) => link.severity === 'broken' || link.severity === 'warning');
      printTable(
        out,
        ['severity', 'status', 'url', 'reason'],
        shown.map((link) => [
          link.severity === 'broken' ? out.colors.red(link.severity) : out.colors.yellow(link.severity),
          link.statusCode ?? '—',
          link.url,
          link.reason,
        ]),
      );
    }
    const s = r.summary;
    const failed = s.broken > 0 || failsGrade(r.grade, options.failOn as string | undefined);
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    summary(
      out,
      !failed,
      `${s.broken} broken, ${s.warnings} warnings, ${s.ok} ok${pages !== undefined ? ` on ${pages} pages` : ''}` +
        ` · grade ${r.grade} (${r.healthScore}) · ${seconds}s`,
    );
    ctx.exit(failed ? EXIT.found : EXIT.ok);
  });

  const extract = program
    .command('extract <url>')
    .description('List the links of a page (1 credit), or of a whole site with --crawl')
    .option('--crawl', 'crawl the site (a job; progress on a terminal)');
  addContractOptions(extract, 'link-extract-crawl', ['url']);
  extract.action(async (url: string, options: Record<string, unknown>) => {
    const client = ctx.client();
    const out = ctx.output();
    let result: Schemas['ExtractResult'] | Schemas['CrawlExtractResult'];
    if (options.crawl) {
      const { jobId } = await client.startLinkExtractCrawl({
        url,
        ...contractValues('link-extract-crawl', options),
      } as never);
      const bar = jobProgress(out, 'crawling');
      const job = await client
        .waitForJob('link-extract', jobId, {
          onProgress: ({ progress: p }) =>
            bar.update(p.pagesScanned, p.pagesDiscovered, `pages ${p.pagesScanned} · links ${p.linksFound}`),
        })
        .finally(() => bar.stop());
      if (job.status === 'failed' || !job.result) throw new Error(`the crawl failed: ${job.error?.message}`);
      result = job.result;
    } else {
      result = await client.linkExtract({ url, ...contractValues('link-extract', options) } as never);
    }
    if (out.json) json(result);
    else
      printTable(
        out,
        ['type', 'url'],
        result.links.map((link) => [link.type, link.url]),
      );
    summary(out, true, `${result.totalLinks} links${result.truncated ? ' (truncated)' : ''}`);
  });

  addContractOptions(
    program.command('ssl <domain>').description('A host’s certificate, chain, protocols and grade (2 credits)'),
    'ssl-scan',
    ['domain'],
  )
    .addOption(failOnOption())
    .action(async (domain: string, options: Record<string, unknown>) => {
      const out = ctx.output();
      const r = await ctx.client().sslScan({ domain, ...contractValues('ssl-scan', options) } as never);
      if (out.json) json(r);
      else
        printFields(out, [
          ['domain', `${r.domain}:${r.port}`],
          ['grade', r.securityGrade],
          ['valid', r.isValid],
          ['expires in', `${r.daysUntilExpiry} days`],
          ['tls', `${r.tlsVersion} ${r.cipherSuite}`],
        ]);
      const failed = !r.isValid || failsGrade(r.securityGrade, options.failOn as string | undefined);
      summary(out, !failed, `${r.domain}: grade ${r.securityGrade}, ${r.isValid ? 'valid' : 'not valid'}`);
      ctx.exit(failed ? EXIT.found : EXIT.ok);
    });

  addContractOptions(
    program.command('meta <url>').description('A page’s metadata and social tags, checked (1 credit)'),
    'meta-scan',
    ['url'],
  )
    .addOption(failOnOption())
    .action(async (url: string, options: Record<string, unknown>) => {
      const out = ctx.output();
      const r = await ctx.client().metaScan({ url, ...contractValues('meta-scan', options) } as never);
      if (out.json) json(r);
      else
        printTable(
          out,
          ['category', 'score'],
          r.categories.map((c: { name?: string; id?: string; score?: number }) => [
            c.name ?? c.id ?? '',
            c.score ?? '',
          ]),
        );
      const failed = failsGrade(r.grade, options.failOn as string | undefined);
      summary(
        out,
        !failed,
        `${r.url}: grade ${r.grade} (${r.finalScore}), ${r.summary.critical} critical, ${r.summary.warnings} warnings`,
      );
      ctx.exit(failed ? EXIT.found : EXIT.ok);
    });

  addContractOptions(
    program.command('down <url>').description('Whether a site is up, and how fast (1 credit)'),
    'down-check',
    ['url'],
  ).action(async (url: string, options: Record<string, unknown>) => {
    const out = ctx.output();
    const r = await ctx.client().downCheck({ url, ...contractValues('down-check', options) } as never);
    if (out.json) json(r);
    else
      printFields(out, [
        ['verdict', r.verdict],
        ['status', r.httpsStatus ?? '—'],
        ['time', r.responseTimeMs === null ? '—' : `${r.responseTimeMs} ms`],
        ['reason', r.reason],
      ]);
    summary(out, r.verdict === 'up', `${r.url} is ${r.verdict}: ${r.reason}`);
    ctx.exit(r.verdict === 'up' ? EXIT.ok : EXIT.found);
  });

  const bookmarks = program.command('bookmarks').description('Bookmark files: check, convert, decrypt');
  addContractOptions(
    bookmarks
      .command('check <file>')
      .description('Check every bookmark of an XBEL or browser HTML file (a job; progress on a terminal)')
      .option('--key <passphrase>', 'the passphrase of a Floccus-encrypted file')
      .option('--salt <salt>', 'the salt of an older Floccus file')
      .option('--webhook-url <url>', 'POSTed the job’s envelope when it ends')
      .option('-o, --output <file>', 'also save the checked file, cleaned with --drop/--update, here')
      .addOption(failOnOption()),
    'bookmarks-check-download',
  ).action(async (path: string, options: Record<string, unknown>) => {
    const client = ctx.client();
    const out = ctx.output();
    const upload = await readUpload(path);
    const { jobId } = await client.checkBookmarks(upload, {
      ...(options.key ? { key: options.key as string } : {}),
      ...(options.salt ? { salt: options.salt as string } : {}),
      ...(options.webhookUrl ? { webhookUrl: options.webhookUrl as string } : {}),
    });
    const bar = jobProgress(out, 'checking');
    const job = await client
      .waitForJob('bookmarks', jobId, {
        onProgress: ({ progress: p }) =>
          bar.update(p.urlsChecked, p.urlsTotal, `urls checked ${p.urlsChecked}/${p.urlsTotal}`),
      })
      .finally(() => bar.stop());
    if (job.status === 'failed' || !job.result) throw new Error(`the check failed: ${job.error?.message}`);
    const r = job.result;
    if (options.output) {
      const file = await client.bookmarkCheckDownload(
        jobId,
        contractValues('bookmarks-check-download', options) as never,
      );
      await save(file, options.output as string, '-');
    }
    if (out.json) json(r);
    else
      printTable(
        out,
        ['severity', 'status', 'url', 'reason'],
        r.bookmarks
          .filter((b) => b.severity === 'broken' || b.severity === 'warning')
          .map((b) => [b.severity, b.statusCode ?? '—', b.url, b.reason]),
      );
    const s = r.summary;
    const failed = s.broken > 0 || failsGrade(r.grade, options.failOn as string | undefined);
    summary(
      out,
      !failed,
      `${s.broken} broken, ${s.warnings} warnings, ${s.redirected} redirected, ` +
        `${s.duplicates} duplicates of ${r.totalBookmarks} bookmarks · grade ${r.grade} · ${bar.seconds()}s`,
    );
    ctx.exit(failed ? EXIT.found : EXIT.ok);
  });

  const convert = (
    name: string,
    description: string,
    call: (client: Webutil, file: never, key?: string) => Promise<{ downloadUrl: string; fileName: string }>,
  ) =>
    bookmarks
      .command(`${name} <file>`)
      .description(description)
      .option('-o, --output <file>', 'where to save it (- for stdout); default: the name the API gives')
      .action(async (path: string, options: Record<string, unknown>) => {
        const client = ctx.client();
        const out = ctx.output();
        const answer = await call(client, (await readUpload(path)) as never, options.key as string | undefined);
        const saved = await save(
          await client.download(answer.downloadUrl),
          options.output as string | undefined,
          answer.fileName,
        );
        if (out.json) json(answer);
        summary(out, true, `${answer.fileName} → ${saved}`, saved === 'stdout');
      });
  convert('to-html', 'An XBEL file as browser bookmark HTML', (client, file) => client.xbelToHtml(file));
  convert('to-xbel', 'Browser bookmark HTML as XBEL', (client, file) => client.htmlToXbel(file));
  convert('decrypt', 'A Floccus-encrypted XBEL file, decrypted', (client, file, key) => {
    if (!key) throw new UsageError('decrypt needs --key <passphrase>');
    return client.xbelDecrypt(file, key);
  }).option('--key <passphrase>', 'the passphrase the file was encrypted with');

  program
    .command('quota')
    .description('Your credits (free)')
    .action(async () => {
      const out = ctx.output();
      const q = await ctx.client().quota();
      if (out.json) json(q);
      else
        printFields(out, [
          ['caller', q.callerKind],
          ['plan', q.plan],
          ['remaining', `${q.remaining} of ${q.limit}`],
        ]);
      summary(out, true, `${q.remaining} credits left`);
    });
}
