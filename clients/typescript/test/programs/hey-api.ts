// Type-checked against @hey-api/openapi-ts's output of docs/openapi.json (test/generators.test.ts).

import { brokenLinksCrawlStatus, brokenLinksCrawlStatusExport, linkExtract, screenshot, sslScan } from './hey/sdk.gen';
import type { LinkExtractData, SslScanData } from './hey/types.gen';

export async function program(): Promise<void> {
  const shot = await screenshot({ body: { url: 'https://example.com/', fullPage: false } });
  if (shot.data) {
    const name: string = shot.data.filename;
    void name;
  }
  const tls = await sslScan({ query: { domain: 'example.com', port: 443 } });
  if (tls.data) {
    const grade: string = tls.data.data.securityGrade;
    void grade;
  }
  // @ts-expect-error port is an integer, not text
  const text: SslScanData['query']['port'] = '443';
  // @ts-expect-error includeResources is a boolean, not text
  const flag: NonNullable<LinkExtractData['query']>['includeResources'] = 'true';
  void [text, flag];
  await linkExtract({ query: { url: 'https://example.com/', includeResources: true } });
  const job = await brokenLinksCrawlStatus({ path: { job_id: 'j' } });
  if (job.data) {
    const status: 'crawling' | 'done' | 'failed' = job.data.data.status;
    void status;
  }
  await brokenLinksCrawlStatusExport({ path: { job_id: 'j' }, query: { format: 'junit' } });
}
