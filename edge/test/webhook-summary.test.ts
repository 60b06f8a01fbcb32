import { expect } from 'chai';
import { summaryOf } from '../src/areas/webhooks/deliver.js';

/** Decision 0283: a job envelope too large to deliver whole goes as its plain fields and its poll URL. */
describe('webhook summary of a large result', () => {
  it('keeps the plain fields, drops objects and lists, and names the poll URL', () => {
    const fields = {
      jobId: 'j1',
      status: 'done',
      pagesCrawled: 4_000,
      finishedAt: null,
      progress: { pagesCrawled: 4_000 },
      result: { links: Array.from({ length: 10 }, (_, i) => ({ url: `https://e.test/${i}` })) },
    };
    const pollUrl = 'https://api.example.test/v1/broken-links/crawl/j1';
    expect(summaryOf(fields, pollUrl)).to.deep.equal({
      jobId: 'j1',
      status: 'done',
      pagesCrawled: 4_000,
      finishedAt: null,
      truncated: true,
      pollUrl,
    });
  });
});
