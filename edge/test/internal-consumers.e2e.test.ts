import * as grpc from '@grpc/grpc-js';
import { readGrpcError } from '@webutil/kit';
import { BillingServiceClient, GetQuotaResponse } from '@webutil/proto/webutil/billing/v1/billing';
import { CrawlServiceClient, type GetBrokenLinkCrawlResponse } from '@webutil/proto/webutil/crawl/v1/crawl';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';

/**
 * Issue 14, internal consumers: every service answers gRPC and, on its Connect port, the Connect
 * protocol with JSON, as plain curl sends it; both run the same handler and give the same result.
 */
describe('internal consumers: gRPC and Connect JSON', function () {
  this.timeout(90_000);
  let stack: TestStack;
  before(async () => {
    stack = await startTestStack();
  });
  after(async () => stack?.stop());

  /** What `curl -H 'content-type: application/json' -d <body> http://host:port/<service>/<method>` does. */
  const connectJson = (service: string, path: string, body: unknown) =>
    fetch(`http://127.0.0.1:${stack.ports[`${service}-connect`]}/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('answers the same quota over both protocols', async () => {
    const credential = { apiKey: stack.apiKey, clientIp: '127.0.0.1' };
    const client = new BillingServiceClient(`127.0.0.1:${stack.ports.billing}`, grpc.credentials.createInsecure());
    const overGrpc = await new Promise<GetQuotaResponse>((resolve, reject) =>
      client.getQuota({ credential, refused: false }, (err, res) => (err ? reject(err) : resolve(res))),
    );
    client.close();
    const res = await connectJson('billing', 'webutil.billing.v1.BillingService/GetQuota', { credential });
    expect(res.status).to.equal(200);
    const overConnect = (await res.json()) as { quota: { plan: string } };
    expect(overConnect.quota.plan).to.equal('ENTERPRISE');
    expect(GetQuotaResponse.fromJSON(overConnect)).to.deep.equal(overGrpc);
  });

  it('fails the same way over both protocols: code, message and reason', async () => {
    const request = { jobId: '00000000-0000-4000-8000-000000000000' };
    const client = new CrawlServiceClient(`127.0.0.1:${stack.ports.crawl}`, grpc.credentials.createInsecure());
    const grpcError = await new Promise<unknown>((resolve) =>
      client.getBrokenLinkCrawl(request, (err: grpc.ServiceError | null, _res?: GetBrokenLinkCrawlResponse) =>
        resolve(err),
      ),
    );
    client.close();
    const overGrpc = readGrpcError(grpcError);
    expect(overGrpc.code).to.equal(grpc.status.NOT_FOUND);

    const res = await connectJson('crawl', 'webutil.crawl.v1.CrawlService/GetBrokenLinkCrawl', request);
    expect(res.status).to.equal(404);
    expect(await res.json()).to.deep.equal({ code: 'not_found', message: overGrpc.message });
    expect(res.headers.get('x-error-reason')).to.equal(overGrpc.reason);
  });
});
