import { BillingServiceService } from '@webutil/proto/webutil/billing/v1/billing';
import { CrawlServiceService } from '@webutil/proto/webutil/crawl/v1/crawl';
import { MetaScanServiceService } from '@webutil/proto/webutil/metascan/v1/metascan';
import { connect, type ServiceClient } from './grpc-clients.js';

/** One client per backing service; addresses come from the edge's configuration. */
export interface Clients {
  billing: ServiceClient<typeof BillingServiceService>;
  metaScan: ServiceClient<typeof MetaScanServiceService>;
  crawl: ServiceClient<typeof CrawlServiceService>;
}

export interface ServiceAddresses {
  billing: string;
  metaScan: string;
  crawl: string;
}

export function connectAll(addresses: ServiceAddresses): Clients {
  return {
    billing: connect(BillingServiceService, addresses.billing),
    metaScan: connect(MetaScanServiceService, addresses.metaScan),
    crawl: connect(CrawlServiceService, addresses.crawl),
  };
}

export function closeAll(clients: Clients): void {
  for (const client of Object.values(clients)) client.close();
}
