import type { TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { eventually, json } from './billing-helpers.js';

export type CrawlRoute = 'broken-links' | 'link-extract';

/** A JSON POST. */
export const post = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

/** Starts a crawl and returns its job id (the start must answer 202 at once). */
export async function startCrawl(
  stack: TestStack,
  route: CrawlRoute,
  url: string,
  options: Record<string, unknown> = {},
): Promise<string> {
  const res = await stack.api(`/v1/${route}/crawl`, post({ url, ...options }));
  const body = await json(res);
  expect(res.status, JSON.stringify(body)).to.equal(202);
  expect(body.data.jobId).to.be.a('string');
  return body.data.jobId as string;
}

/**
 * The job's "crawl ended" log lines, once one has arrived and half a second more has passed: a
 * crawl logs its end after storing it, and the line reaches the test through the process's stdout,
 * possibly after a poll has read the job done.
 */
export async function crawlEnds(stack: Pick<TestStack, 'logs'>, jobId: string): Promise<string[]> {
  const ends = () => stack.logs.filter((line) => line.includes(jobId) && line.includes('crawl ended'));
  await eventually(async () => expect(ends()).to.not.be.empty, 10_000);
  await new Promise((resolve) => setTimeout(resolve, 500));
  return ends();
}

/** The site audit engine the crawl service logged for the job ('distributed' or 'one-worker'), once logged. */
export async function auditEngine(stack: Pick<TestStack, 'logs'>, jobId: string): Promise<string> {
  const engine = () =>
    stack.logs
      .filter((line) => line.includes(jobId) && line.includes('site audit engine'))
      .map((line) => /"engine":"([a-z-]+)"/.exec(line)?.[1])[0];
  await eventually(async () => expect(engine()).to.be.a('string'), 10_000);
  return engine() as string;
}

/** The engine of a site audit without fragment checks: by the SITE_AUDIT_DISTRIBUTED the crawl reads (default on). */
export const switchedEngine = () =>
  ['0', 'false'].includes(process.env.SITE_AUDIT_DISTRIBUTED ?? '') ? 'one-worker' : 'distributed';

export interface Polled {
  /** The last envelope (`data`), once status is no longer `crawling`. */
  job: any;
  /** Every progress object seen while crawling, in order. */
  progress: any[];
}

/** Polls a job until it leaves `crawling`; 503s while the crawl service restarts are waited out. */
export async function pollJob(stack: TestStack, route: CrawlRoute, jobId: string, timeoutMs = 60_000): Promise<Polled> {
  const deadline = Date.now() + timeoutMs;
  const progress: any[] = [];
  for (;;) {
    const res = await stack.api(`/v1/${route}/crawl/${jobId}`);
    if (res.status !== 503) {
      const body = await json(res);
      expect(res.status, JSON.stringify(body)).to.equal(200);
      if (body.data.status !== 'crawling') return { job: body.data, progress };
      progress.push(body.data.progress);
    }
    if (Date.now() > deadline)
      throw new Error(`job ${jobId} still crawling after ${timeoutMs} ms: ${JSON.stringify(progress.at(-1))}`);
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
}

/** Link records by URL. */
export function byUrl<T extends { url: string }>(links: T[]): Map<string, T> {
  return new Map(links.map((link) => [link.url, link]));
}
