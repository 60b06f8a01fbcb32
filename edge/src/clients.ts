import { AccountMailServiceService } from '@webutil/proto/webutil/billing/v1/account_mail';
import { BillingServiceService } from '@webutil/proto/webutil/billing/v1/billing';
import { PaymentServiceService } from '@webutil/proto/webutil/billing/v1/payments';
import { WebhookServiceService } from '@webutil/proto/webutil/billing/v1/webhooks';
import { BookmarkServiceService } from '@webutil/proto/webutil/bookmark/v1/bookmark';
import { CrawlServiceService } from '@webutil/proto/webutil/crawl/v1/crawl';
import { SiteAuditServiceService } from '@webutil/proto/webutil/crawl/v1/site_audit';
import { MetaScanServiceService } from '@webutil/proto/webutil/metascan/v1/metascan';
import { MonitorServiceService } from '@webutil/proto/webutil/monitor/v1/monitor';
import { MonitorStatusServiceService } from '@webutil/proto/webutil/monitor/v1/status';
import { RenderServiceService } from '@webutil/proto/webutil/render/v1/render';
import { TlsScanServiceService } from '@webutil/proto/webutil/tlsscan/v1/tlsscan';
import { connect, type ServiceClient } from './grpc-clients.js';

/** One client per backing service; addresses come from the edge's configuration. */
export interface Clients {
  billing: ServiceClient<typeof BillingServiceService>;
  /** Billing's webhook books (the same process as `billing`). */
  webhooks: ServiceClient<typeof WebhookServiceService>;
  /** Billing's card payments through Stripe (the same process as `billing`). */
  payments: ServiceClient<typeof PaymentServiceService>;
  /** Billing's account mail: verification, password reset, notice settings (the same process as `billing`). */
  accountMail: ServiceClient<typeof AccountMailServiceService>;
  metaScan: ServiceClient<typeof MetaScanServiceService>;
  crawl: ServiceClient<typeof CrawlServiceService>;
  /** Site audits (the same process as `crawl`). */
  siteAudit: ServiceClient<typeof SiteAuditServiceService>;
  render: ServiceClient<typeof RenderServiceService>;
  bookmark: ServiceClient<typeof BookmarkServiceService>;
  tlsScan: ServiceClient<typeof TlsScanServiceService>;
  monitor: ServiceClient<typeof MonitorServiceService>;
  /** Status pages and badges (the monitor service's process). */
  monitorStatus: ServiceClient<typeof MonitorStatusServiceService>;
}

export interface ServiceAddresses {
  billing: string;
  metaScan: string;
  crawl: string;
  render: string;
  bookmark: string;
  tlsScan: string;
  monitor: string;
}

export function connectAll(addresses: ServiceAddresses): Clients {
  return {
    billing: connect(BillingServiceService, addresses.billing),
    webhooks: connect(WebhookServiceService, addresses.billing),
    payments: connect(PaymentServiceService, addresses.billing),
    accountMail: connect(AccountMailServiceService, addresses.billing),
    metaScan: connect(MetaScanServiceService, addresses.metaScan),
    crawl: connect(CrawlServiceService, addresses.crawl),
    siteAudit: connect(SiteAuditServiceService, addresses.crawl),
    render: connect(RenderServiceService, addresses.render),
    bookmark: connect(BookmarkServiceService, addresses.bookmark),
    tlsScan: connect(TlsScanServiceService, addresses.tlsScan),
    monitor: connect(MonitorServiceService, addresses.monitor),
    monitorStatus: connect(MonitorStatusServiceService, addresses.monitor),
  };
}

export function closeAll(clients: Clients): void {
  for (const client of Object.values(clients)) client.close();
}
