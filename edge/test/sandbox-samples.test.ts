import { Contract } from '@webutil/scripts/contract';
import { expect } from 'chai';
import type { Context } from 'koa';
import type { Clients } from '../src/clients.js';
import { successBody } from '../src/envelope.js';
import { openApiJson } from '../src/openapi.js';
import { presenter } from '../src/rest/message.js';
import type { RouteSpec } from '../src/route-spec.js';
import { downloads, routes } from '../src/routes.js';
import { answersFromSamples, sandboxClientsFor } from '../src/sandbox/clients.js';
import { SAMPLE_FILES, SAMPLE_JOBS } from '../src/sandbox/files.js';
import { anything, inputOf } from './route-inputs.js';

/** Each job poll's sample job, and the sample job of a route that reads a finished job (the audit's PDF). */
const POLLED: Record<string, string> = {
  'broken-links-crawl-status': SAMPLE_JOBS.brokenLinksCrawl,
  'link-extract-crawl-status': SAMPLE_JOBS.linkExtractCrawl,
  'bookmarks-check-status': SAMPLE_JOBS.bookmarksCheck,
  'site-audit-status': SAMPLE_JOBS.siteAudit,
  'site-audit-report-pdf': SAMPLE_JOBS.siteAudit,
};

/** No real client is reached: the webhook books are the only real part, and no start here has a webhookUrl. */
const sandboxClients = sandboxClientsFor({} as Clients);
const ctx = { publicBaseUrl: 'https://api.example.test' } as Context;
const options = { requestId: 'r1', timeoutMs: 1_000, signal: new AbortController().signal };

/** The answer the pipeline would give a sandbox call of the route, as a Response. */
async function sandboxAnswer(spec: RouteSpec, jobId?: string): Promise<Response> {
  // A sandbox call holds nothing, so pricing it by size changes nothing (the pipeline's reprice).
  const noPrice = async () => undefined;
  const reply = await spec.call(
    sandboxClients,
    inputOf(spec, { job_id: jobId }) as never,
    options,
    anything as never,
    noPrice,
  );
  const fields = presenter(spec.output)(spec.present ? spec.present(reply, ctx) : reply);
  const headers = { 'content-type': 'application/json', 'x-credits-remaining': '9', 'x-request-id': 'r1' };
  return new Response(JSON.stringify(successBody(fields, spec.envelope ?? 'data')), {
    status: spec.status ?? 200,
    headers: { ...headers, ...spec.headers?.(reply, ctx) },
  });
}

/**
 * The sandbox's samples (docs/decisions/0207-sandbox-keys.md) without a stack: every
 * credit-spending route and job poll of the table is answered from them in the shape the OpenAPI
 * document declares, so a route added without a sample fails here first.
 */
describe('the sandbox’s samples', () => {
  const contract = new Contract(JSON.parse(openApiJson(routes, downloads)));

  it('answer every credit-spending route and job poll as the contract declares', async () => {
    const answered = routes.filter((spec) => spec.credits > 0 || spec.freeRead === 'job-poll');
    expect(answered.length).to.be.greaterThan(15);
    for (const spec of answered) {
      const jobId = POLLED[spec.operation];
      if (spec.freeRead === 'job-poll') expect(jobId, `a sample job for ${spec.operation}`).to.be.a('string');
      const path = `/v1${spec.path.replace(':job_id', jobId ?? '')}`;
      const res = await sandboxAnswer(spec, jobId).catch((err: Error) => {
        throw new Error(`${spec.operation} has no sample answer: ${err.message}`);
      });
      await contract.check(spec.method, `https://api.example.test${path}`, res);
    }
  });

  it('are used for a sandbox caller’s spending calls and anyone’s sample ids, never otherwise', () => {
    const spending = { credits: 2 };
    const free = { credits: 0 };
    expect(answersFromSamples(spending, { sandbox: true }, {})).to.equal(true);
    expect(answersFromSamples(spending, { sandbox: undefined }, {})).to.equal(false);
    expect(answersFromSamples(free, { sandbox: true }, {})).to.equal(false);
    expect(answersFromSamples(free, undefined, { job_id: SAMPLE_JOBS.brokenLinksCrawl })).to.equal(true);
    expect(answersFromSamples(free, undefined, { job_id: '0b7f6e2c-2a49-4f3e-9a51-7b1f4c0e2d11' })).to.equal(false);
  });

  it('are small files of the types they claim', () => {
    expect(SAMPLE_FILES.screenshot.bytes.subarray(0, 8).toString('latin1')).to.equal('\x89PNG\r\n\x1a\n');
    const pdf = SAMPLE_FILES.pdf.bytes.toString('latin1');
    expect(pdf.startsWith('%PDF-1.4')).to.equal(true);
    // The cross-reference table's offset points at it.
    const xref = Number(/startxref\n(\d+)\n/.exec(pdf)?.[1]);
    expect(pdf.slice(xref, xref + 4)).to.equal('xref');
    for (const file of Object.values(SAMPLE_FILES)) expect(file.bytes.length).to.be.within(50, 4096);
  });
});
