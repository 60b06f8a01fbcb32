import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { freePort } from '@webutil/scripts/local-stack';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';

/** Issue 14, operations: every process exposes Prometheus metrics on its own port. */
describe('Prometheus metrics', function () {
  this.timeout(90_000);
  let stack: TestStack;
  let site: FixtureSite;
  const ports: Record<string, number> = {};

  before(async () => {
    site = await startFixtureSite();
    for (const name of ['edge', 'billing', 'meta-scan', 'crawl', 'render']) ports[name] = await freePort();
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      envFor: Object.fromEntries(Object.entries(ports).map(([name, port]) => [name, { METRICS_PORT: String(port) }])),
    });
  });
  after(async () => {
    await stack?.stop();
    await site?.close();
  });

  const scrape = async (name: string) => {
    const res = await fetch(`http://127.0.0.1:${ports[name]}/metrics`);
    expect(res.status).to.equal(200);
    return res.text();
  };
  /** The value of one series, or undefined when absent. */
  const value = (text: string, series: string) => {
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return line === undefined ? undefined : Number(line.slice(series.length + 1));
  };

  it('counts requests per route, RPCs per method, credits spent and refused, crawls and the render pool', async () => {
    const paid = await stack.api(`/v1/down-check?url=${encodeURIComponent(site.url('/ok'))}`);
    expect(paid.status).to.equal(200);
    // An anonymous caller without a cleared challenge is refused the credit it asked for.
    const refused = await stack.api(`/v1/down-check?url=${encodeURIComponent(site.url('/ok'))}`, { anonymous: true });
    expect(refused.status).to.equal(401);

    const edge = await scrape('edge');
    expect(
      value(edge, 'webutil_http_request_duration_seconds_count{route="/v1/down-check",method="GET",status="200"}'),
    ).to.equal(1);
    expect(
      value(edge, 'webutil_http_request_duration_seconds_count{route="/v1/down-check",method="GET",status="401"}'),
    ).to.equal(1);

    const billing = await scrape('billing');
    expect(value(billing, 'webutil_credits_spent_total')).to.equal(1);
    expect(value(billing, 'webutil_credits_refused_total{reason="CHALLENGE_REQUIRED"}')).to.equal(1);
    expect(value(billing, 'webutil_rpc_duration_seconds_count{rpc="Authorize",code="OK"}')).to.be.at.least(2);

    expect(value(await scrape('meta-scan'), 'webutil_rpc_duration_seconds_count{rpc="DownCheck",code="OK"}')).to.equal(
      1,
    );
    expect(value(await scrape('crawl'), 'webutil_crawls_active')).to.equal(0);
    const render = await scrape('render');
    expect(value(render, 'webutil_render_queue_length')).to.equal(0);
    expect(render).to.include('webutil_render_open_pages');
  });
});
